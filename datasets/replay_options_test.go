package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mooncakeSessions is a Mooncake trace of three sessions: a has two turns
// 2 s apart, b one turn 10 s later, c one turn 100 s after that.
const mooncakeSessions = `{"timestamp": 0, "input_length": 30, "output_length": 5, "session_id": "a"}
{"timestamp": 2000, "delay": 4000, "input_length": 40, "output_length": 5, "session_id": "a"}
{"timestamp": 10000, "input_length": 30, "output_length": 5, "session_id": "b"}
{"timestamp": 110000, "input_length": 30, "output_length": 5, "session_id": "c"}
`

// firstTimes is every conversation's first timestamp and its later turns'
// delays, as "ID@ts[+delay…]".
func firstTimes(d *Dataset) string {
	var parts []string
	for _, c := range d.Conversations {
		p := fmt.Sprintf("%s@%s", c.ID, c.Turns[0].Timestamp)
		if !c.Turns[0].HasTimestamp {
			p = c.ID + "@-"
		}
		for _, t := range c.Turns[1:] {
			p += "+" + t.Delay.String()
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// TestReplayOptions: every replay option changes the loaded trace as
// AIPerf's flag does, and the zero options leave it as recorded.
func TestReplayOptions(t *testing.T) {
	t.Parallel()
	mc := writeFile(t, "m.jsonl", mooncakeSessions)
	for _, tc := range []struct {
		name string
		r    ReplayOptions
		want string
	}{
		{"as recorded", ReplayOptions{}, "a@0s+4s b@10s c@1m50s"},
		{"speedup", ReplayOptions{Speedup: 2}, "a@0s+2s b@5s c@55s"},
		{"delay cap", ReplayOptions{DelayCap: time.Second, DelayCapSet: true}, "a@0s+1s b@10s c@1m50s"},
		{"delay cap zero", ReplayOptions{DelayCapSet: true}, "a@0s+0s b@10s c@1m50s"},
		{"idle gap cap", ReplayOptions{IdleGapCap: 5 * time.Second}, "a@0s+4s b@5s c@10s"},
		{"speedup then idle gap cap", ReplayOptions{Speedup: 10, IdleGapCap: 5 * time.Second}, "a@0s+400ms b@1s c@6s"},
		{"ignore delays", ReplayOptions{IgnoreDelays: true}, "a@-+0s b@- c@-"},
	} {
		d, _, err := Load(Options{InputFile: mc, CustomDatasetType: TypeMooncake, Replay: tc.r})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := firstTimes(d); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if tc.r.IgnoreDelays && d.HasTimestamps() {
			t.Errorf("%s: the trace still replays on its timestamps", tc.name)
		}
	}
}

// TestSessionSample: a fraction of the sessions, each whole, the same for
// a seed and another for another seed; a tiny fraction keeps one.
func TestSessionSample(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"timestamp_start_unix_ms": %d, "prompt": "p", "input_tokens": 1, "output_tokens": 2, "provided_session_id": "s%d"}`+"\n", 1000+i, i/2)
	}
	path := writeFile(t, "b.jsonl", b.String())
	load := func(ratio float64, seed uint64) *Dataset {
		d, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeBaseten, Seed: seed, Replay: ReplayOptions{SessionSample: ratio}})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	half := load(0.5, 7)
	if n := len(half.Conversations); n < 30 || n > 70 {
		t.Errorf("ratio 0.5 kept %d of 100 sessions", n)
	}
	for _, c := range half.Conversations {
		if len(c.Turns) != 2 {
			t.Errorf("session %s kept %d of its 2 turns", c.ID, len(c.Turns))
		}
	}
	if firstTimes(load(0.5, 7)) != firstTimes(half) || firstTimes(load(0.5, 8)) == firstTimes(half) {
		t.Errorf("the sample is not the seed's")
	}
	if n := len(load(1e-9, 7).Conversations); n != 1 {
		t.Errorf("a tiny ratio kept %d sessions, want 1", n)
	}
}

// TestBasetenReplayOptions: strict open loop sends every row alone;
// --omit-kv-hints and --no-force-min-tokens leave their fields out.
func TestBasetenReplayOptions(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "b.jsonl", basetenTwoSessions)
	d, _, err := Load(Options{InputFile: path, Replay: ReplayOptions{Strict: true, OmitKVHints: true, NoMinTokens: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got := firstTimes(d); got != "baseten-m:2#0@0s baseten-p:x#0@4s baseten-p:x#1@8s" {
		t.Errorf("strict: %s", got)
	}
	for _, c := range d.Conversations {
		if c.Turns[0].Extra != nil || c.OpenLoop {
			t.Errorf("%s sends %v", c.ID, c.Turns[0].Extra)
		}
	}
}

// TestWekaReplayOptions: think times from think_time, traces over the
// context limit left out, gaps within a trace shortened.
func TestWekaReplayOptions(t *testing.T) {
	t.Parallel()
	trace := func(id string, in int, starts ...float64) string {
		var reqs []string
		for i, s := range starts {
			reqs = append(reqs, fmt.Sprintf(`{"t": %g, "type": "n", "model": "m", "in": %d, "out": 10, "hash_ids": [1], "api_time": 1, "think_time": %g}`, s, in, 0.5+float64(i)))
		}
		return fmt.Sprintf(`{"id": %q, "models": ["m"], "block_size": 64, "hash_id_scope": "local", "requests": [%s]}`, id, strings.Join(reqs, ","))
	}
	dir := t.TempDir()
	writeAt(t, dir, "a.json", trace("a", 50, 0, 10, 100))
	writeAt(t, dir, "b.json", trace("b", 60, 5))
	load := func(r ReplayOptions) (*Dataset, *Report) {
		d, rep, err := Load(Options{InputFile: dir, CustomDatasetType: TypeWeka, Replay: r})
		if err != nil {
			t.Fatal(err)
		}
		return d, rep
	}
	d, _ := load(ReplayOptions{})
	if got := firstTimes(d); got != "a@0s+9s+1m29s b@5s" {
		t.Errorf("as recorded: %s", got)
	}
	if d, _ = load(ReplayOptions{ThinkTimeOnly: true}); firstTimes(d) != "a@0s+1.5s+2.5s b@5s" {
		t.Errorf("think time only: %s", firstTimes(d))
	}
	d, rep := load(ReplayOptions{MaxContext: 65})
	if firstTimes(d) != "a@0s+9s+1m29s" || !strings.Contains(strings.Join(rep.Lines, "\n"), "1 traces left out") {
		t.Errorf("max context 65: %s %v", firstTimes(d), rep.Lines)
	}
	if d, _ = load(ReplayOptions{TraceIdleGapCap: 20 * time.Second, TraceIdleGapCapSet: true, DelayCap: time.Second, DelayCapSet: true}); firstTimes(d) != "a@0s+9s+19s b@5s" {
		t.Errorf("trace idle gap cap 20 s: %s", firstTimes(d))
	}
	if _, _, err := Load(Options{InputFile: dir, CustomDatasetType: TypeWeka, Replay: ReplayOptions{MaxContext: 10}}); !isOption(err, "Replay.MaxContext") {
		t.Errorf("a limit under every trace: %v", err)
	}
}

// TestReplayOptionsRefused: an option for another type, or for a dataset
// that is no trace, is an error naming it, never ignored.
func TestReplayOptionsRefused(t *testing.T) {
	t.Parallel()
	mc := writeFile(t, "m.jsonl", mooncakeSessions)
	for _, tc := range []struct {
		kind  string
		r     ReplayOptions
		field string
	}{
		{TypeMooncake, ReplayOptions{ClosedLoop: true}, "Replay.ClosedLoop"},
		{TypeMooncake, ReplayOptions{OmitKVHints: true}, "Replay.OmitKVHints"},
		{TypeMooncake, ReplayOptions{NoMinTokens: true}, "Replay.NoMinTokens"},
		{TypeMooncake, ReplayOptions{Strict: true}, "Replay.Strict"},
		{TypeMooncake, ReplayOptions{ThinkTimeOnly: true}, "Replay.ThinkTimeOnly"},
		{TypeMooncake, ReplayOptions{MaxContext: 9}, "Replay.MaxContext"},
		{TypeMooncake, ReplayOptions{TraceIdleGapCapSet: true}, "Replay.TraceIdleGapCap"},
		{TypeMooncake, ReplayOptions{Speedup: -1}, "Replay.Speedup"},
		{TypeMooncake, ReplayOptions{SessionSample: 2}, "Replay.SessionSample"},
		{TypeSingleTurn, ReplayOptions{Speedup: 2}, "Replay.Speedup"},
		{TypeSingleTurn, ReplayOptions{IgnoreDelays: true}, "Replay.IgnoreDelays"},
	} {
		path := mc
		if tc.kind == TypeSingleTurn {
			path = writeFile(t, "s.jsonl", `{"text": "hi"}`+"\n")
		}
		_, _, err := Load(Options{InputFile: path, CustomDatasetType: tc.kind, Replay: tc.r})
		if !isOption(err, tc.field) {
			t.Errorf("%s %+v: %v, want an option error on %s", tc.kind, tc.r, err, tc.field)
		}
	}
	if _, _, err := Load(Options{Synthetic: SyntheticOptions{Count: 1, ISL: 8}, Replay: ReplayOptions{DelayCapSet: true}}); !isOption(err, "Replay.DelayCap") {
		t.Errorf("synthetic prompts with a delay cap: %v", err)
	}
}

// isOption reports whether err is an *OptionError about field.
func isOption(err error, field string) bool {
	var oe *OptionError
	return errors.As(err, &oe) && oe.Option == field
}

// writeAt writes a file named name into dir.
func writeAt(t testing.TB, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
