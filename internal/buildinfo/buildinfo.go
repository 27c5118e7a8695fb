// Package buildinfo says which build of surge is running: its version
// (a release's tag), the commit it was built from and that commit's time.
// A release build stamps them with the linker (-ldflags -X); any other
// build takes what the Go toolchain recorded in the binary
// (runtime/debug.ReadBuildInfo): the module's version for `go install
// …@vX`, the VCS revision and time for a `go build` in a git checkout.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Dev is the version of a build that names none.
const Dev = "dev"

// Info is one build's identity.
type Info struct {
	// Version is the release's tag (v0.2.0), or Dev.
	Version string
	// Commit is the full commit hash ("": unknown); Date its time
	// (RFC 3339, UTC); Modified says the working tree had changes.
	Commit, Date string
	Modified     bool
	// Go is the toolchain that built it.
	Go string
}

// Read is the build's identity: the stamps given (main's -X variables;
// "" where a build set none), completed from the binary's build info.
func Read(version, commit, date string) Info {
	bi, _ := debug.ReadBuildInfo()
	return read(Info{Version: version, Commit: commit, Date: date}, bi)
}

// read completes the stamps from bi (nil: none recorded).
func read(i Info, bi *debug.BuildInfo) Info {
	if bi != nil {
		i.fill(bi)
	}
	if i.Version == "" {
		i.Version = Dev
	}
	return i
}

// fill takes what the stamps left unsaid from the toolchain's record.
func (i *Info) fill(bi *debug.BuildInfo) {
	i.Go = bi.GoVersion
	if v := bi.Main.Version; i.Version == "" && v != "" && v != "(devel)" {
		i.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if i.Commit == "" {
				i.Commit = s.Value
			}
		case "vcs.time":
			if i.Date == "" {
				i.Date = s.Value
			}
		case "vcs.modified":
			i.Modified = i.Modified || s.Value == "true"
		}
	}
	// A module version carries its commit (v0.0.0-20261207040000-0123abcd4567)
	// when go install took a commit rather than a tag.
	if parts := strings.Split(i.Version, "-"); i.Commit == "" && len(parts) >= 3 && len(parts[len(parts)-1]) == 12 {
		i.Commit = parts[len(parts)-1]
	}
}

// String is how `surge --version` reads: the version, then the commit
// (12 characters, "+ changes" when the tree had some), its date and the
// toolchain.
func (i Info) String() string {
	var more []string
	if i.Commit != "" {
		c := "commit " + i.Commit[:min(12, len(i.Commit))]
		if i.Modified {
			c += " + changes"
		}
		more = append(more, c)
	} else {
		more = append(more, "commit unknown")
	}
	if i.Date != "" {
		more = append(more, i.Date)
	}
	if i.Go != "" {
		more = append(more, i.Go)
	}
	return fmt.Sprintf("%s (%s)", i.Version, strings.Join(more, ", "))
}
