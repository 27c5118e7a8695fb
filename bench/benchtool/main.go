//go:build unix

// Command benchtool is bench/overhead.sh's helper, so that the script needs
// nothing but Go:
//
//	benchtool run -o usage.json -- surge profile ...
//	benchtool get FILE.json KEY[.KEY...]
//	benchtool fetch URL
//	benchtool ttfterr profile_export.jsonl wire.jsonl
//	benchtool bare -url URL [-concurrency N] [-n N] [-osl N] [-o FILE]
//
// run starts the command, passes its stdout and stderr through, and writes
// what the kernel charged to it as one JSON object: {"user_s", "sys_s",
// "max_rss_kib", "wall_s", "exit_code"}; it exits with the child's code.
// get prints the number or string at a dotted path of a JSON file
// ("total_output_tokens.avg"), or fails naming the missing key. fetch
// prints the body of a GET (the mock's /stats) and fails on a non-200.
// ttfterr joins the client's records with the mock's --wire-log and prints
// the TTFT error against the wire truth (see ttfterr.go). bare is the
// reference client the burst scenario compares surge with (see bare.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// Usage is what run reports about the child.
type Usage struct {
	UserS     float64 `json:"user_s"`
	SysS      float64 `json:"sys_s"`
	MaxRSSKiB int64   `json:"max_rss_kib"`
	WallS     float64 `json:"wall_s"`
	ExitCode  int     `json:"exit_code"`
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "run":
		os.Exit(run(os.Args[2:]))
	case "get":
		if len(os.Args) != 4 {
			usage()
		}
		v, err := get(os.Args[2], os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtool get:", err)
			os.Exit(1)
		}
		fmt.Println(v)
	case "fetch":
		if len(os.Args) != 3 {
			usage()
		}
		if err := fetch(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "benchtool fetch:", err)
			os.Exit(1)
		}
	case "ttfterr":
		if len(os.Args) != 4 {
			usage()
		}
		if err := ttfterr(os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "benchtool ttfterr:", err)
			os.Exit(1)
		}
	case "bare":
		if err := bare(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "benchtool bare:", err)
			os.Exit(1)
		}
	default:
		usage()
	}
}

func fetch(url string) error {
	resp, err := outbound.NewClient().Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(os.Stdout, resp.Body)
	return err
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchtool run [-o report.json] -- command [args...]\n       benchtool get FILE.json KEY[.KEY...]\n       benchtool fetch URL\n       benchtool ttfterr profile_export.jsonl wire.jsonl\n       benchtool bare -url URL [-concurrency N] [-n N] [-osl N] [-o FILE]")
	os.Exit(2)
}

func run(argv []string) int {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	out := fs.String("o", "", "write the JSON report here (default: stderr)")
	_ = fs.Parse(argv)
	args := fs.Args()
	if len(args) == 0 {
		usage()
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	began := time.Now()
	err := cmd.Run()
	wall := time.Since(began)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "benchtool run: %s: %v\n", args[0], err)
		return 2
	}
	st := cmd.ProcessState
	u := Usage{UserS: st.UserTime().Seconds(), SysS: st.SystemTime().Seconds(), WallS: wall.Seconds(), ExitCode: st.ExitCode()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		u.MaxRSSKiB = ru.Maxrss // Linux reports ru_maxrss in KiB
	}
	b, _ := json.Marshal(u)
	b = append(b, '\n')
	if *out == "" {
		_, _ = os.Stderr.Write(b)
	} else if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "benchtool run: -o: %v\n", err)
		return 2
	}
	return u.ExitCode
}

func get(file, path string) (string, error) {
	b, err := bounded.ReadFile(context.Background(), file, 256<<20)
	if err != nil {
		return "", err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%s: %q is not inside an object (path %s)", file, k, path)
		}
		if v, ok = m[k]; !ok {
			return "", fmt.Errorf("%s: no key %q (path %s)", file, k, path)
		}
	}
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case string:
		return x, nil
	default:
		b, _ := json.Marshal(x)
		return string(b), nil
	}
}
