package main

import (
	"archive/tar"
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// repo is the repository's root, from this package's folder.
const repo = "../.."

// TestReleaseBuildsAndImage runs what the release workflow runs, for the
// host's platform and offline: release/build.sh (a stamped static binary,
// its checksum and SBOM), then this program on its output (an OCI
// layout). It checks the image's layout, config, labels and files, and
// runs the binary taken from its layer: it names the tag and the commit.
func TestReleaseBuildsAndImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds surge for a release (minutes on 2 cores the first time)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary taken from the image")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: release/build.sh stamps the commit from it")
	}
	commit := strings.TrimSpace(command(t, repo, nil, "git", "rev-parse", "HEAD"))
	arch := runtime.GOARCH
	dist := t.TempDir()
	const tag = "v0.0.0-test"
	command(t, repo, []string{"TARGETS=linux/" + arch}, "bash", "release/build.sh", tag, dist)

	bin := filepath.Join(dist, "surge_linux_"+arch)
	if out := command(t, dist, nil, bin, "--version"); !strings.Contains(out, tag) || !strings.Contains(out, "commit "+commit[:12]) {
		t.Errorf("surge --version of the release binary: %q, want %s and commit %s", out, tag, commit[:12])
	}
	checkSums(t, dist)
	checkSBOM(t, bin+".cdx.json", tag)

	oci := filepath.Join(t.TempDir(), "oci")
	o, err := parseFlags([]string{"--platform", "linux/" + arch, "--binary-dir", dist, "--ca-certs", testRoots(t), "--version", tag, "--oci", oci})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	img := imageOf(t, oci, arch)
	checkConfig(t, img, tag, commit, arch)
	files := layerFiles(t, img)
	checkFiles(t, files)

	// The binary taken from the image's layer runs, and names the commit.
	extracted := filepath.Join(t.TempDir(), "surge")
	if err := os.WriteFile(extracted, files["usr/local/bin/surge"].body, 0o755); err != nil {
		t.Fatal(err)
	}
	if out := command(t, dist, nil, extracted, "--version"); !strings.Contains(out, tag) || !strings.Contains(out, "commit "+commit[:12]) {
		t.Errorf("surge --version from the image: %q", out)
	}
}

// command runs name with args in dir (env added) and returns its output,
// failing the test when it fails.
func command(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkSums: SHA256SUMS names every binary of dist with its hash.
func checkSums(t *testing.T, dist string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS: %s's hash is not %s", name, sum)
		}
	}
	if n != 2 { // the binary and its SBOM
		t.Errorf("SHA256SUMS has %d lines, want the binary's and its SBOM's", n)
	}
}

// checkSBOM: the SBOM is CycloneDX naming surge at the tag and the
// modules linked in (the OpenTelemetry SDK among them).
func checkSBOM(t *testing.T, path, tag string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var bom struct {
		Format   string `json:"bomFormat"`
		Metadata struct {
			Component struct{ PURL string }
		}
		Components []struct{ Name, Version string }
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatal(err)
	}
	if bom.Format != "CycloneDX" || bom.Metadata.Component.PURL != "pkg:golang/github.com/surgebench/surge@"+tag {
		t.Errorf("SBOM: format %q, main component %q", bom.Format, bom.Metadata.Component.PURL)
	}
	found := false
	for _, c := range bom.Components {
		found = found || c.Name == "go.opentelemetry.io/otel/sdk" && c.Version != ""
	}
	if !found {
		t.Errorf("SBOM lists %d modules, not the OpenTelemetry SDK", len(bom.Components))
	}
}

// testRoots writes a CA certificate of the test's own (the image carries
// whatever roots it is given).
func testRoots(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "surge test root"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// imageOf reads the layout's index and returns the image for arch.
func imageOf(t *testing.T, dir, arch string) v1.Image {
	t.Helper()
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := root.IndexManifest()
	if err != nil || len(rm.Manifests) != 1 || rm.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json: %+v, %v: want one OCI image index", rm, err)
	}
	if rm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" {
		t.Error("the layout names no ref")
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("image index: %+v, %v", im, err)
	}
	d := im.Manifests[0]
	if d.Platform == nil || d.Platform.OS != "linux" || d.Platform.Architecture != arch || d.MediaType != types.OCIManifestSchema1 {
		t.Errorf("manifest descriptor %+v: want an OCI manifest for linux/%s", d, arch)
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func checkConfig(t *testing.T, img v1.Image, tag, commit, arch string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != arch || c.User != "65532:65532" || len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/local/bin/surge" {
		t.Errorf("config: os %s arch %s user %q entrypoint %q", cf.OS, cf.Architecture, c.User, c.Entrypoint)
	}
	env := strings.Join(c.Env, " ")
	for _, want := range []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "HOME=/home/nonroot", "PATH=/usr/local/bin:"} {
		if !strings.Contains(env, want) {
			t.Errorf("env %q lacks %s", c.Env, want)
		}
	}
	for k, want := range map[string]string{"org.opencontainers.image.version": tag, "org.opencontainers.image.revision": commit,
		"org.opencontainers.image.title": "surge", "org.opencontainers.image.source": source} {
		if c.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], want)
		}
	}
	m, err := img.Manifest()
	if err != nil || m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("manifest %+v, %v: want an OCI config and one OCI layer", m, err)
	}
}

// entry is one file of the layer.
type entry struct {
	hdr  *tar.Header
	body []byte
}

func layerFiles(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = entry{hdr: h, body: b}
	}
	return files
}

func checkFiles(t *testing.T, files map[string]entry) {
	t.Helper()
	bin, ok := files["usr/local/bin/surge"]
	if !ok || bin.hdr.Mode&0o111 == 0 || bin.hdr.Uid != 0 {
		t.Errorf("usr/local/bin/surge: %+v", bin.hdr)
	}
	if !strings.Contains(string(files["etc/passwd"].body), "nonroot:x:65532:65532:") {
		t.Errorf("etc/passwd: %q", files["etc/passwd"].body)
	}
	if !strings.Contains(string(files["etc/ssl/certs/ca-certificates.crt"].body), "BEGIN CERTIFICATE") {
		t.Error("no CA roots")
	}
	if h := files["home/nonroot"].hdr; h == nil || h.Uid != 65532 {
		t.Errorf("home/nonroot: %+v, want it the user's", h)
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--oci", "x"}, ""},
		{[]string{}, "nothing to do"},
		{[]string{"--tar", "x.tar"}, "one platform"},
		{[]string{"--platform", "darwin/arm64", "--oci", "x"}, "for linux"},
		{[]string{"--push", "ghcr.io/a/surge:1", "--push", "ghcr.io/a/surge:latest"}, ""},
	} {
		_, err := parseFlags(c.args)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.args, err, c.err)
		}
	}
}

// TestWorkflowRunsTheTestedCommands: the release workflow builds with
// release/build.sh and this program, with flags this program takes, and
// the README's downloads are files release/build.sh makes.
func TestWorkflowRunsTheTestedCommands(t *testing.T) {
	t.Parallel()
	wf, err := os.ReadFile(filepath.Join(repo, ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wf), `bash release/build.sh "$GITHUB_REF_NAME" dist`) {
		t.Error("the workflow does not build with release/build.sh")
	}
	// The image step's command, its continuations joined and its
	// variables given values.
	text := strings.ReplaceAll(string(wf), "\\\n", " ")
	vars := strings.NewReplacer(`"$image:${GITHUB_REF_NAME#v}"`, "ghcr.io/surgebench/surge:1.2.3", `"$image:latest"`, "ghcr.io/surgebench/surge:latest",
		`"$GITHUB_REF_NAME"`, "v1.2.3")
	n := 0
	for line := range strings.SplitSeq(text, "\n") {
		_, cmd, ok := strings.Cut(line, "go run ./release/image ")
		if !ok {
			continue
		}
		n++
		if _, err := parseFlags(strings.Fields(vars.Replace(cmd))); err != nil {
			t.Errorf("the workflow's image command: %v\n%s", err, cmd)
		}
	}
	if n != 1 {
		t.Errorf("%d image commands in the workflow, want 1", n)
	}

	script, err := os.ReadFile(filepath.Join(repo, "release", "build.sh"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(script), `targets="${TARGETS:-`)
	list, _, _ := strings.Cut(rest, `}"`)
	made := map[string]bool{"SHA256SUMS": true}
	for _, tgt := range strings.Fields(list) {
		name := "surge_" + strings.ReplaceAll(tgt, "/", "_")
		if strings.HasPrefix(tgt, "windows/") {
			name += ".exe"
		}
		made[name], made[name+".cdx.json"] = true, true
	}
	if len(made) != 13 {
		t.Fatalf("release/build.sh makes %v: want six targets", made)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const dl = "releases/latest/download/"
	found := 0
	for _, part := range strings.Split(string(readme), dl)[1:] {
		name := part[:strings.IndexFunc(part, func(r rune) bool { return r == ' ' || r == '\n' || r == ')' || r == '`' || r == '"' })]
		found++
		if !made[name] {
			t.Errorf("README downloads %s, which release/build.sh does not make", name)
		}
	}
	if found == 0 {
		t.Error("the README downloads no release file")
	}
}
