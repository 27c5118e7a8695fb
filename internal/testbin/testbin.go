// Package testbin serves the tests that run surge as a user does. Surge
// is the binary, built once for a given source: `go test ./...` runs
// several packages whose tests run it, and linking it is seconds of CPU
// each time. The binary is kept in the temporary folder under a key made
// from the build cache's outputs for surge and every package it links (so
// any change to a source file, an embedded file, the toolchain or the
// build's settings makes a new one), and a test process that finds it
// built uses it as it is. Parallel lets a package whose tests wait on
// processes and servers run more of them at once than it has CPUs.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pkg is the main package built.
const pkg = "github.com/surgebench/surge"

var (
	once sync.Once
	path string
	err  error
)

// Surge returns the path of the surge binary built from this tree's
// sources, building it at most once per test process and once per source
// across processes. It skips the test with -short, or when no go tool is
// on PATH.
func Surge(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the surge binary; skipped with -short")
	}
	goTool, lookErr := exec.LookPath("go")
	if lookErr != nil {
		t.Skip("the go tool is not on PATH: cannot build surge")
	}
	once.Do(func() { path, err = build(goTool) })
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// build returns the cached binary for the sources' key, linking it first
// when no process has: under a lock, so two packages' tests starting at
// once link it once.
func build(goTool string) (string, error) {
	key, err := sourceKey(goTool)
	if err != nil {
		return "", err
	}
	root := filepath.Join(os.TempDir(), fmt.Sprintf("surge-testbin-%d", os.Getuid()))
	dir := filepath.Join(root, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %w", lock.Name(), err)
	}
	defer func() { _ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) }()
	bin := filepath.Join(dir, "surge")
	now := time.Now()
	if _, err := os.Stat(bin); err == nil {
		// Used now: prune leaves it for another hour.
		_ = os.Chtimes(dir, now, now)
		return bin, nil
	}
	tmp := bin + ".tmp"
	if out, err := exec.Command(goTool, "build", "-o", tmp, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	prune(root, dir)
	return bin, nil
}

// sourceKey names what the binary is built from: the build cache's
// output file of every package surge links (each named by a hash of its
// compiled contents), listed by the go tool under the same environment as
// the build.
func sourceKey(goTool string) (string, error) {
	cmd := exec.Command(goTool, "list", "-deps", "-export", "-f", "{{.ImportPath}} {{.Export}}", pkg)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list: %w\n%s", err, stderr.String())
	}
	sum := sha256.Sum256(out)
	return hex.EncodeToString(sum[:12]), nil
}

// keep is how long a binary no test has asked for stays.
const keep = time.Hour

// prune removes the binaries of other sources that no test asked for
// within keep (a test process still running asked for its own within its
// timeout, far less).
func prune(root, current string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if p == current || !e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > keep {
			_ = os.RemoveAll(p)
		}
	}
}

// Parallel sets how many parallel tests run at once to n (or GOMAXPROCS,
// if more) unless the command line gave -parallel: for a package whose
// tests wait (on their servers' answers, timers, child processes) far
// longer than they compute, where go test's default of one per CPU leaves
// the CPUs idle. TestMain calls it before m.Run.
func Parallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(n, runtime.GOMAXPROCS(0))))
	}
}
