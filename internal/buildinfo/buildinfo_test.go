package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFill(t *testing.T) {
	t.Parallel()
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-07T04:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name   string
		stamps Info
		bi     debug.BuildInfo
		want   string
	}{
		{"a release's stamps win", Info{Version: "v1.2.0", Commit: "feedfacefeedfacefeed", Date: "2026-12-01T00:00:00Z"},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"v1.2.0 (commit feedfacefeed + changes, 2026-12-01T00:00:00Z, go1.26.8)"},
		{"a go build in a checkout", Info{},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			"dev (commit 0123456789ab + changes, 2026-12-07T04:00:00Z, go1.26.8)"},
		{"go install of a tag", Info{},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}},
			"v1.3.0 (commit unknown, go1.26.8)"},
		{"go install of a commit", Info{},
			debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261207040000-0123abcd4567"}},
			"v0.0.0-20261207040000-0123abcd4567 (commit 0123abcd4567, go1.26.8)"},
	} {
		if got := read(c.stamps, &c.bi).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
