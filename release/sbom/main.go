// Command sbom writes the software bill of materials of a Go binary as
// CycloneDX JSON (1.5): the main module and every module linked into it,
// with their versions and go.sum hashes, read from the binary itself
// (debug/buildinfo: what `go version -m` prints), so it lists what was
// built, not what go.mod allows.
//
//	go run ./release/sbom -version v1.2.0 dist/surge_linux_amd64 > dist/surge_linux_amd64.cdx.json
package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

func main() {
	fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
	version := fs.String("version", "", "the binary's version, when its build info has none (a release's tag)")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sbom [-version TAG] BINARY > BINARY.cdx.json")
		os.Exit(2)
	}
	if err := write(os.Stdout, fs.Arg(0), *version); err != nil {
		fmt.Fprintln(os.Stderr, "sbom:", err)
		os.Exit(1)
	}
}

// bom is the part of CycloneDX 1.5 an SBOM of a Go binary fills.
type bom struct {
	Format     string      `json:"bomFormat"`
	Spec       string      `json:"specVersion"`
	Version    int         `json:"version"`
	Metadata   metadata    `json:"metadata"`
	Components []component `json:"components"`
	Depends    []depends   `json:"dependencies"`
}

type metadata struct {
	Component  component  `json:"component"`
	Properties []property `json:"properties,omitempty"`
}

type component struct {
	Type       string     `json:"type"`
	Ref        string     `json:"bom-ref"`
	Name       string     `json:"name"`
	Version    string     `json:"version,omitempty"`
	PURL       string     `json:"purl,omitempty"`
	Hashes     []hash     `json:"hashes,omitempty"`
	Properties []property `json:"properties,omitempty"`
}

type hash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type property struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type depends struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

func write(w io.Writer, path, version string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return err
	}
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	if bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		// A release build's tag: given, else the -X stamp (recorded
		// only without -trimpath).
		bi.Main.Version = version
		if version == "" {
			bi.Main.Version = stamped(bi.Settings)
		}
	}
	main := module(bi.Main, "application")
	main.Name = filepath.Base(path)
	main.Hashes = []hash{{Alg: "SHA-256", Content: sum}}
	main.Properties = []property{{Name: "go:module", Value: bi.Main.Path}, {Name: "go:toolchain", Value: bi.GoVersion}}
	for _, s := range bi.Settings {
		main.Properties = append(main.Properties, property{Name: "go:build:" + s.Key, Value: s.Value})
	}
	b := bom{Format: "CycloneDX", Spec: "1.5", Version: 1, Metadata: metadata{Component: main}}
	root := depends{Ref: main.Ref, DependsOn: []string{}}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		c := module(*d, "library")
		b.Components = append(b.Components, c)
		root.DependsOn = append(root.DependsOn, c.Ref)
	}
	b.Depends = []depends{root}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(b)
}

// stamped is the version a build set with -ldflags "-X main.version=…".
func stamped(settings []debug.BuildSetting) string {
	for _, s := range settings {
		if s.Key != "-ldflags" {
			continue
		}
		for _, f := range strings.Fields(s.Value) {
			if v, ok := strings.CutPrefix(f, "main.version="); ok {
				return v
			}
		}
	}
	return ""
}

// module is a Go module as a component: its package URL, and its go.sum
// hash (h1:, base64 SHA-256 of the module's files) as a property.
func module(m debug.Module, typ string) component {
	v := m.Version
	if v == "(devel)" {
		v = ""
	}
	purl := "pkg:golang/" + m.Path
	if v != "" {
		purl += "@" + v
	}
	c := component{Type: typ, Ref: purl, Name: m.Path, Version: v, PURL: purl}
	if m.Sum != "" {
		c.Properties = []property{{Name: "go:sum", Value: m.Sum}}
	}
	return c
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
