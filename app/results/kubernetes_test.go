package results

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/profile"
	runspec "github.com/surgebench/surge/app/spec"
	"github.com/urfave/cli/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The manifests of examples/kubernetes are decoded into the Kubernetes API
// types, strictly (an unknown or misspelt field fails), and their shell
// lines are run with a stand-in surge that records its arguments, which
// surge's own flag parsing and planning must then accept: the example
// cannot rot as the API or surge's flags change.

const k8sDir = "../../examples/kubernetes"

// k8sManifests decodes every document of the example's files by kind.
func k8sManifests(t *testing.T) (cms map[string]*corev1.ConfigMap, pvcs map[string]*corev1.PersistentVolumeClaim, jobs map[string]*batchv1.Job) {
	t.Helper()
	cms, pvcs, jobs = map[string]*corev1.ConfigMap{}, map[string]*corev1.PersistentVolumeClaim{}, map[string]*batchv1.Job{}
	for _, f := range []string{"plan.yaml", "shards.yaml", "merge.yaml"} {
		b, err := os.ReadFile(filepath.Join(k8sDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			var meta struct{ APIVersion, Kind string }
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			strict := func(v any) {
				if err := yaml.UnmarshalStrict(doc, v); err != nil {
					t.Fatalf("%s document %d (%s): %v", f, i+1, meta.Kind, err)
				}
			}
			switch meta.APIVersion + " " + meta.Kind {
			case "v1 ConfigMap":
				var cm corev1.ConfigMap
				strict(&cm)
				cms[cm.Name] = &cm
			case "v1 PersistentVolumeClaim":
				var pvc corev1.PersistentVolumeClaim
				strict(&pvc)
				pvcs[pvc.Name] = &pvc
			case "batch/v1 Job":
				var job batchv1.Job
				strict(&job)
				jobs[job.Name] = &job
			default:
				t.Fatalf("%s document %d: unexpected %s %s", f, i+1, meta.APIVersion, meta.Kind)
			}
		}
	}
	return cms, pvcs, jobs
}

// shellArgs runs a container's shell line with env and a stand-in surge
// on PATH, and returns the arguments surge was run with.
func shellArgs(t *testing.T, c corev1.Container, env map[string]string) []string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to run the manifests' shell lines")
	}
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || c.Command[1] != "-c" || len(c.Args) != 1 {
		t.Fatalf("container %s: command %q args %q, want /bin/sh -c and one line", c.Name, c.Command, c.Args)
	}
	bin := t.TempDir()
	out := filepath.Join(bin, "args")
	stub := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > " + out + "\n"
	if err := os.WriteFile(filepath.Join(bin, "surge"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sh, "-c", c.Args[0])
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("container %s: %v\n%s", c.Name, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("container %s never ran surge: %v", c.Name, err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Not parallel: it runs a urfave/cli app, whose help flag apps share.
func TestKubernetesExample(t *testing.T) {
	cms, pvcs, jobs := k8sManifests(t)
	plan, shardsJob, mergeJob := cms["surge-plan"], jobs["surge-shards"], jobs["surge-merge"]
	if plan == nil || shardsJob == nil || mergeJob == nil || pvcs["surge-results"] == nil {
		t.Fatalf("want ConfigMap surge-plan, PVC surge-results, Jobs surge-shards and surge-merge; got %v %v %v", cms, pvcs, jobs)
	}
	if m := pvcs["surge-results"].Spec.AccessModes; len(m) != 1 || m[0] != corev1.ReadWriteMany {
		t.Errorf("surge-results access modes %v: N pods on N nodes need ReadWriteMany", m)
	}
	n := plan.Data["SURGE_SHARDS"]
	spec := shardsJob.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("surge-shards completionMode %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism || n != itoa(*spec.Completions) {
		t.Errorf("surge-shards completions %v parallelism %v, SURGE_SHARDS %q: want all equal", spec.Completions, spec.Parallelism, n)
	}
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 || spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("surge-shards retries a failed shard (backoffLimit %v, restartPolicy %s): it would send its part late", spec.BackoffLimit, spec.Template.Spec.RestartPolicy)
	}
	for _, job := range []*batchv1.Job{shardsJob, mergeJob} {
		ps := job.Spec.Template.Spec
		if len(ps.Volumes) != 1 || ps.Volumes[0].PersistentVolumeClaim == nil || ps.Volumes[0].PersistentVolumeClaim.ClaimName != "surge-results" {
			t.Errorf("%s: volumes %+v, want the claim surge-results", job.Name, ps.Volumes)
		}
		if m := ps.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != "/results" {
			t.Errorf("%s: mounts %+v, want /results", job.Name, m)
		}
		var from []string
		for _, e := range ps.Containers[0].EnvFrom {
			from = append(from, e.ConfigMapRef.Name)
		}
		if strings.Join(from, " ") != "surge-plan surge-start" {
			t.Errorf("%s: env from %v, want surge-plan and surge-start", job.Name, from)
		}
	}

	// The shard's line, as pod 1 runs it, is a valid surge profile of
	// shard 1 of N that writes under the start instant.
	results := t.TempDir()
	startAt := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	env := map[string]string{"SURGE_START_AT": startAt, "JOB_COMPLETION_INDEX": "1"}
	for k, v := range plan.Data {
		env[k] = v
	}
	args := shellArgs(t, shardsJob.Spec.Template.Spec.Containers[0], env)
	if args[0] != "profile" {
		t.Fatalf("shard runs surge %q, want profile", args)
	}
	var cfg cmdline.Config
	cfg.JobIndex = env["JOB_COMPLETION_INDEX"]
	app := &cli.App{Name: "surge", Commands: []*cli.Command{{Name: "profile", Flags: cmdline.ProfileFlags(&cfg), Action: func(*cli.Context) error { return nil }}},
		OnUsageError: cmdline.OnUsageError, Writer: os.Stderr, ErrWriter: os.Stderr}
	if err := app.Run(append([]string{"surge"}, args...)); err != nil {
		t.Fatalf("surge %q: %v", args, err)
	}
	want := "/results/" + startAt + "/shard-1"
	if cfg.ArtifactDir != want || cfg.StartAt != startAt || strings.Join(cfg.URLs, " ") != plan.Data["SURGE_URL"] || cfg.UI != "simple" {
		t.Errorf("shard 1: output %q start %q url %q ui %q; want %q, %q, the plan's URL, simple", cfg.ArtifactDir, cfg.StartAt, cfg.URLs, cfg.UI, want, startAt)
	}
	// Plan it (a small count: the flags are the point, not the prompts).
	cfg.RequestCount, cfg.WarmupCount = min(cfg.RequestCount, 40), min(cfg.WarmupCount, 4)
	cfg.SkipPreflight = true // the plan's server is the cluster's, not here
	rs, err := runspec.Parse(cfg)
	if err != nil {
		t.Fatalf("shard 1 of the example: %v", err)
	}
	if _, err := profile.Prepare(rs, &bytes.Buffer{}); err != nil {
		t.Fatalf("shard 1 of the example: %v", err)
	}
	if rs.Shard.String() != "1/"+n || rs.StartAt.IsZero() || len(rs.Goodput) == 0 {
		t.Errorf("shard %v, start %v, goodput %v: want 1/%s, the start instant and the plan's objectives", rs.Shard, rs.StartAt, rs.Goodput, n)
	}

	// The merge waits for every shard's export, then merges them all, from
	// where the shards wrote them.
	dir := filepath.Join(results, startAt)
	for i := range *spec.Completions {
		shard := filepath.Join(dir, "shard-"+itoa(i))
		if err := os.MkdirAll(shard, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shard, profile.FileState), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merge := mergeJob.Spec.Template.Spec.Containers[0]
	merge.Args = []string{strings.ReplaceAll(merge.Args[0], "/results", results)}
	args = shellArgs(t, merge, env)
	if args[0] != "merge" {
		t.Fatalf("merge Job runs surge %q, want merge", args)
	}
	dirs, out, err := mergeArgs(args[1:], "")
	if err != nil || itoa(int32(len(dirs))) != n || out != "merged" {
		t.Errorf("surge %q: folders %v, output %q, %v; want the %s shards and merged", args, dirs, out, err, n)
	}
	for i, d := range dirs {
		if d != "shard-"+itoa(int32(i)) {
			t.Errorf("merge folder %d is %q, want shard-%d (where the shards write)", i, d, i)
		}
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
