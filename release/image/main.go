// Command image builds surge's container image without Docker, with
// go-containerregistry: one layer holding the static binary
// (/usr/local/bin/surge), the CA roots (/etc/ssl/certs) and a non-root
// user (65532, /etc/passwd), surge as the entrypoint, OCI labels naming
// the version and commit. It writes an OCI layout folder (--oci), a
// tarball `docker load` reads (--tar, one platform), or pushes to a
// registry (--push, credentials from the Docker config as `docker login`
// or a CI's login action leaves them).
//
// From a clone (the binaries built for you, stamped from git):
//
//	go run ./release/image --platform linux/amd64 --oci surge-oci
//	go run ./release/image --push ghcr.io/YOU/surge:dev
//
// The release workflow builds on a base with a shell (--base), which the
// Kubernetes example's manifests use; without --base the image is the
// layer alone.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/surgebench/surge/internal/outbound"
)

// Where things are in the image.
const (
	binPath   = "/usr/local/bin/surge"
	certsPath = "/etc/ssl/certs/ca-certificates.crt"
	home      = "/home/nonroot"
	uid       = 65532
	source    = "https://github.com/surgebench/surge"
)

// options are the command line's.
type options struct {
	platforms []string
	binDir    string
	certs     string
	base      string
	version   string
	commit    string
	created   string
	oci, tar  string
	push      []string
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	platforms := fs.String("platform", "linux/amd64,linux/arm64", "platforms to build, comma-separated (linux/ARCH)")
	fs.StringVar(&o.binDir, "binary-dir", "", "folder of release/build.sh's binaries (surge_linux_ARCH); default: build them here")
	fs.StringVar(&o.certs, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA roots to put in the image (PEM)")
	fs.StringVar(&o.base, "base", "", "a base image to build on (default: none, the layer alone)")
	fs.StringVar(&o.version, "version", "", "the version the labels name (default: git describe, else dev)")
	fs.StringVar(&o.oci, "oci", "", "write an OCI image layout to this folder")
	fs.StringVar(&o.tar, "tar", "", "write a tarball docker load reads (one platform) to this file")
	fs.Func("push", "push to this reference (repeat for more tags)", func(s string) error { o.push = append(o.push, s); return nil })
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for p := range strings.SplitSeq(*platforms, ",") {
		if p = strings.TrimSpace(p); p != "" {
			if !strings.HasPrefix(p, "linux/") {
				return o, fmt.Errorf("--platform %s: the image is for linux", p)
			}
			o.platforms = append(o.platforms, p)
		}
	}
	switch {
	case len(o.platforms) == 0:
		return o, errors.New("--platform: none given")
	case o.oci == "" && o.tar == "" && len(o.push) == 0:
		return o, errors.New("nothing to do: give --oci DIR, --tar FILE or --push REF")
	case o.tar != "" && len(o.platforms) > 1:
		return o, errors.New("--tar holds one platform: give one --platform")
	}
	return o, nil
}

func run(o options) error {
	o.stamp()
	if o.binDir == "" {
		dir, err := os.MkdirTemp("", "surge-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := buildBinaries(o, dir); err != nil {
			return err
		}
		o.binDir = dir
	}
	certs, err := os.ReadFile(o.certs)
	if err != nil {
		return fmt.Errorf("--ca-certs: %w", err)
	}
	var adds []mutate.IndexAddendum
	for _, p := range o.platforms {
		img, err := platformImage(o, p, certs)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		plat, _ := v1.ParsePlatform(p)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: plat}})
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	if o.oci != "" {
		lp, err := layout.Write(o.oci, empty.Index)
		if err != nil {
			return err
		}
		if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": o.version})); err != nil {
			return err
		}
		fmt.Println("wrote", o.oci)
	}
	if o.tar != "" {
		ref, err := name.ParseReference("surge:" + strings.TrimPrefix(o.version, "v"))
		if err != nil {
			return err
		}
		if err := tarball.WriteToFile(o.tar, ref, adds[0].Add.(v1.Image)); err != nil {
			return err
		}
		fmt.Println("wrote", o.tar)
	}
	for _, r := range o.push {
		ref, err := name.ParseReference(r)
		if err != nil {
			return fmt.Errorf("--push %s: %w", r, err)
		}
		if err := remote.WriteIndex(ref, idx, registryOptions()...); err != nil {
			return fmt.Errorf("--push %s: %w", r, err)
		}
		fmt.Println("pushed", ref)
	}
	return nil
}

// registryOptions reach a registry through surge's one outbound transport,
// with the credentials the Docker config holds.
func registryOptions() []remote.Option {
	return []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(outbound.NewTransport(outbound.TransportOptions{}))}
}

// stamp fills the version, commit and date from git where not given.
func (o *options) stamp() {
	git := func(args ...string) string {
		b, err := exec.Command("git", args...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	if o.version == "" {
		o.version = git("describe", "--tags", "--always", "--dirty")
	}
	if o.version == "" {
		o.version = "dev"
	}
	o.commit = git("rev-parse", "HEAD")
	o.created = git("show", "-s", "--format=%cI", "HEAD")
	if t, err := time.Parse(time.RFC3339, o.created); err == nil {
		o.created = t.UTC().Format(time.RFC3339)
	} else {
		o.created = time.Unix(0, 0).UTC().Format(time.RFC3339) // reproducible without git
	}
}

// buildBinaries builds a static surge for each platform into dir, as
// release/build.sh names them.
func buildBinaries(o options, dir string) error {
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s", o.version, o.commit, o.created)
	for _, p := range o.platforms {
		arch := strings.TrimPrefix(p, "linux/")
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", filepath.Join(dir, "surge_linux_"+arch), ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		fmt.Fprintln(os.Stderr, "building surge for", p)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build for %s: %w", p, err)
		}
	}
	return nil
}

// platformImage is the image of one platform: the base (or none), the
// layer, and the config that runs surge as the non-root user.
func platformImage(o options, platform string, certs []byte) (v1.Image, error) {
	arch := strings.TrimPrefix(platform, "linux/")
	bin, err := os.ReadFile(filepath.Join(o.binDir, "surge_linux_"+arch))
	if err != nil {
		return nil, fmt.Errorf("the binary: %w (release/build.sh writes surge_linux_%s)", err, arch)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	if o.base != "" {
		ref, err := name.ParseReference(o.base)
		if err != nil {
			return nil, fmt.Errorf("--base: %w", err)
		}
		plat, _ := v1.ParsePlatform(platform)
		if base, err = remote.Image(ref, append(registryOptions(), remote.WithPlatform(*plat))...); err != nil {
			return nil, fmt.Errorf("--base %s: %w", o.base, err)
		}
	}
	files, err := layerTar(bin, certs)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(files)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created, _ := time.Parse(time.RFC3339, o.created)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: created},
		CreatedBy: "release/image: surge " + o.version, Comment: "the static binary, CA roots, the non-root user"}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = "linux", arch, v1.Time{Time: created}
	cf.Config.User = fmt.Sprintf("%d:%d", uid, uid)
	cf.Config.Entrypoint = []string{binPath}
	cf.Config.Cmd = nil
	cf.Config.WorkingDir = home
	cf.Config.Env = []string{"PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=" + certsPath, "HOME=" + home}
	cf.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "surge",
		"org.opencontainers.image.description": "benchmark OpenAI-compatible LLM inference servers",
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.revision":    o.commit,
		"org.opencontainers.image.created":     o.created,
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	return mutate.ConfigFile(img, cf)
}

// layerTar is the layer's files, owned by root but the user's home; the
// same bytes for the same inputs (times fixed).
func layerTar(bin, certs []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dir := func(name string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: owner, Gid: owner, ModTime: epoch, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, body []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", uid, uid, home)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	for _, step := range []func() error{
		func() error { return dir("etc/", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("etc/ssl/", 0o755, 0) },
		func() error { return dir("etc/ssl/certs/", 0o755, 0) },
		func() error { return file(strings.TrimPrefix(certsPath, "/"), 0o644, certs) },
		func() error { return dir("home/", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(home, "/")+"/", 0o755, uid) },
		func() error { return dir("tmp/", 0o1777, 0) },
		func() error { return dir("usr/", 0o755, 0) },
		func() error { return dir("usr/local/", 0o755, 0) },
		func() error { return dir("usr/local/bin/", 0o755, 0) },
		func() error { return file(strings.TrimPrefix(binPath, "/"), 0o755, bin) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
