package server

import (
	"math"
	"strings"
	"testing"

	"github.com/surgebench/surge/telemetry"
)

func TestUpdateView(t *testing.T) {
	var m Model
	m, _ = m.Update(Msg{Server: []telemetry.ServerSample{
		{URL: "http://a/metrics", Running: 8, Waiting: 2, KVCacheUsage: 0.5},
		{URL: "http://b/metrics", Running: 1, Waiting: math.NaN(), KVCacheUsage: math.NaN()},
	}})
	if m.Len() != 2 {
		t.Fatalf("Len = %d", m.Len())
	}
	lines := strings.Split(m.View(80, 5), "\n")
	tests := []struct {
		line int
		want []string
	}{
		{0, []string{"run    8", "wait    2", "kv  50%", "http://a/metrics"}},
		{1, []string{"run    1", "wait  n/a", "kv  n/a", "http://b/metrics"}},
	}
	for _, tt := range tests {
		for _, w := range tt.want {
			if !strings.Contains(lines[tt.line], w) {
				t.Errorf("line %d = %q, want %q", tt.line, lines[tt.line], w)
			}
		}
	}
	if v := m.View(80, 1); strings.Contains(v, "\n") {
		t.Errorf("height 1 gave several lines: %q", v)
	}
}

// TestUnacceptedQueue: llama.cpp with 4 slots busy reports 1 request
// deferred while the client has 8 in flight; 3 more wait unseen for one of
// its HTTP threads. The panel shows them beside the server's own count,
// and only for a single server (the client's count is all servers').
func TestUnacceptedQueue(t *testing.T) {
	llama := telemetry.ServerSample{URL: "http://l/metrics", Family: "llamacpp", Running: 4, Waiting: 1, KVCacheUsage: 0.2}
	cases := []struct {
		name     string
		servers  []telemetry.ServerSample
		inFlight int64
		want     string // "" : no unaccepted note
	}{
		{"llama.cpp, 8 in flight", []telemetry.ServerSample{llama}, 8, "wait    1 +3 unaccepted"},
		{"all taken in", []telemetry.ServerSample{llama}, 5, ""},
		{"client count lags the scrape", []telemetry.ServerSample{llama}, 2, ""},
		{"no waiting gauge", []telemetry.ServerSample{{URL: "u", Running: 4, Waiting: math.NaN(), KVCacheUsage: math.NaN()}}, 8, ""},
		{"two servers", []telemetry.ServerSample{llama, llama}, 20, ""},
	}
	for _, tc := range cases {
		var m Model
		m, _ = m.Update(Msg{Server: tc.servers, InFlight: tc.inFlight})
		v := m.View(100, 3)
		if tc.want == "" {
			if strings.Contains(v, "unaccepted") {
				t.Errorf("%s: %q says unaccepted", tc.name, v)
			}
			continue
		}
		if !strings.Contains(v, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, v, tc.want)
		}
	}
}
