package fingerprint

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigLeavesOutSecretsAndTarget(t *testing.T) {
	t.Parallel()
	base := map[string]any{"model": "m", "isl": 128, "concurrency": "8", "url": "http://a", "api_key": "sk-1"}
	same := map[string]any{"model": "m", "isl": 128, "concurrency": "8", "url": "http://b", "api_key": "sk-2",
		"headers": map[string]any{"Authorization": "Bearer x"}, "ui": "none"}
	if Config(base) != Config(same) {
		t.Errorf("target, credentials and ui changed the config hash")
	}
	// A flag a later surge added, at its zero value, changes nothing.
	added := map[string]any{"model": "m", "isl": 128, "concurrency": "8", "shard": "", "shards": 0, "new_list": []string{}, "off": false}
	if Config(base) != Config(added) {
		t.Errorf("keys at their zero value changed the config hash")
	}
	if Config(base) == Config(map[string]any{"model": "m", "isl": 128, "concurrency": "8", "shards": 2}) {
		t.Errorf("a key set to a non-zero value did not change the config hash")
	}
	other := map[string]any{"model": "m", "isl": 256, "concurrency": "8"}
	if Config(base) == Config(other) {
		t.Errorf("isl 128 and 256 hash alike")
	}
	for _, k := range []string{"api_key", "headers", "hf_token", "client_secret", "auth_header", "password"} {
		if !Secret(k) {
			t.Errorf("Secret(%q) = false", k)
		}
	}
	for _, k := range []string{"tokenizer", "model", "isl", "output_tokens_mean"} {
		if Secret(k) {
			t.Errorf("Secret(%q) = true", k)
		}
	}
}

func TestDatasetIgnoresOrder(t *testing.T) {
	t.Parallel()
	var a, b, c Dataset
	a.Add("s1", 0, []byte(`{"x":1}`))
	a.Add("s2", 0, []byte(`{"x":2}`))
	b.Add("s2", 0, []byte(`{"x":2}`))
	b.Add("s1", 0, []byte(`{"x":1}`))
	c.Add("s1", 0, []byte(`{"x":1}`))
	c.Add("s2", 1, []byte(`{"x":2}`))
	if a.Sum() != b.Sum() {
		t.Errorf("order changed the dataset hash")
	}
	if a.Sum() == c.Sum() {
		t.Errorf("a different turn index hashed alike")
	}
	var empty Dataset
	if empty.Sum() != "" {
		t.Errorf("empty dataset hash = %q, want empty", empty.Sum())
	}
}

func TestReadInputs(t *testing.T) {
	t.Parallel()
	in := `{"data":[
{"session_id":"s1","turn_index":0,"payloads":[{"messages":[{"role":"user","content":"hi"}]}]},
{"session_id":"s2","turn_index":0,"payloads":[{"messages":[{"role":"user","content":"yo"}]}]}
], "extra": {"ignored": true}}`
	var d, want Dataset
	if err := ReadInputs(strings.NewReader(in), &d); err != nil {
		t.Fatal(err)
	}
	want.Add("s2", 0, []byte(`{"messages":[{"role":"user","content":"yo"}]}`))
	want.Add("s1", 0, []byte(`{"messages":[{"role":"user","content":"hi"}]}`))
	if d.Sum() != want.Sum() || d.Len() != 2 {
		t.Errorf("ReadInputs: %d bodies, %s; want 2, %s", d.Len(), d.Sum(), want.Sum())
	}
	for _, bad := range []string{``, `[]`, `{"data":{}}`, `{"data":[{"payloads":3}]}`} {
		if err := ReadInputs(strings.NewReader(bad), &Dataset{}); err == nil {
			t.Errorf("ReadInputs(%q): no error", bad)
		}
	}
}

func TestSealChangesWithEachPart(t *testing.T) {
	t.Parallel()
	f := Fingerprint{Config: "c", Dataset: "d", Tokenizer: "t"}
	f.Seal()
	for _, g := range []Fingerprint{{Config: "c2", Dataset: "d", Tokenizer: "t"}, {Config: "c", Dataset: "d2", Tokenizer: "t"}, {Config: "c", Dataset: "d", Tokenizer: "t2"}} {
		g.Seal()
		if g.Workload == f.Workload {
			t.Errorf("%+v: workload unchanged", g)
		}
	}
	if !strings.HasPrefix(f.Workload, "sha256:") || len(f.Workload) != len("sha256:")+16 {
		t.Errorf("workload %q: want sha256: and 16 hex digits", f.Workload)
	}
}

func TestProbe(t *testing.T) {
	t.Parallel()
	var sawAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models":
			sawAuth = r.Header.Get("Authorization")
			w.Header().Set("Server", "uvicorn")
			w.Write([]byte(`{"object":"list","data":[{"id":"qwen"},{"id":"llama"}]}`))
		case "/metrics":
			w.Write([]byte("# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 1\n# TYPE vllm:kv_cache_usage_perc gauge\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	s, err := Probe(context.Background(), srv.Client(), srv.URL+"/", http.Header{"Authorization": {"Bearer sk"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &Server{Models: []string{"llama", "qwen"}, Version: "Server: uvicorn",
		MetricFamilies: []string{"vllm:kv_cache_usage_perc", "vllm:num_requests_running"}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Probe (-want +got):\n%s", diff)
	}
	if sawAuth != "Bearer sk" {
		t.Errorf("Authorization not sent")
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	defer dead.Close()
	if _, err := Probe(context.Background(), dead.Client(), dead.URL, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Probe of a server that answers nothing: err %v, want the 404", err)
	}
}

func FuzzReadInputs(f *testing.F) {
	f.Add([]byte(`{"data":[{"session_id":"s","turn_index":1,"payloads":[{}]}]}`))
	f.Add([]byte(`{"data":[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Dataset
		_ = ReadInputs(strings.NewReader(string(b)), &d)
		_ = d.Sum()
	})
}

func TestNestedConfigHashesItsWorkload(t *testing.T) {
	nested := map[string]any{
		"endpoint": map[string]any{"urls": []any{"http://a"}, "api_key": "<redacted>", "model_names": []any{"m"}},
		"input":    map[string]any{"headers": []any{}, "prompt": map[string]any{"input_tokens": map[string]any{"mean": 128.0}}},
		"loadgen":  map[string]any{"concurrency": "8", "knee_factor": 2.0},
	}
	flat := Flatten(nested)
	if flat["input.prompt.input_tokens.mean"] != 128.0 || flat["loadgen.concurrency"] != "8" {
		t.Errorf("Flatten = %v", flat)
	}
	if !InWorkload("loadgen.concurrency") || InWorkload("endpoint.urls") || InWorkload("endpoint.api_key") || InWorkload("input.headers") {
		t.Error("InWorkload does not judge a dotted path by its setting")
	}
	// Where the run went and how it was shown do not change the hash; the
	// workload does.
	other := map[string]any{
		"endpoint": map[string]any{"urls": []any{"http://b"}, "model_names": []any{"m"}},
		"input":    map[string]any{"prompt": map[string]any{"input_tokens": map[string]any{"mean": 128.0}}},
		"loadgen":  map[string]any{"concurrency": "8", "knee_factor": 3.0},
	}
	if Config(nested) != Config(other) {
		t.Error("runs that differ only in target and knee factor hash apart")
	}
	// Nor where it is remembered, under what label, at what price.
	other["output"] = map[string]any{"history": "/tmp/h.db", "history_label": "nightly", "cost_per_hour_usd": 2.5}
	if Config(nested) != Config(other) {
		t.Error("a labelled, priced run hashes apart from its baseline")
	}
	other["loadgen"].(map[string]any)["concurrency"] = "16"
	if Config(nested) == Config(other) {
		t.Error("runs of different concurrency hash alike")
	}
}

// TestSampleIsBounded: a sample hashes at most SampleItems items of at
// most SampleItemBytes, spread over the whole dataset (its first and a
// late item count), and the number of items; in any order.
func TestSampleIsBounded(t *testing.T) {
	t.Parallel()
	item := func(i int64) []byte { return []byte(strings.Repeat("x", int(i%7)) + string(rune('a'+i%26))) }
	build := func(n int64, change int64, reverse bool) *Sample {
		s := NewSample(n)
		for k := range n {
			i := k
			if reverse {
				i = n - 1 - k
			}
			if !s.Take(i) {
				continue
			}
			b := item(i)
			if i == change {
				b = append(b, '!')
			}
			s.Add(i, "s", int(i), b)
		}
		return s
	}
	const n = 1_000_003
	a := build(n, -1, false)
	if a.Len() > SampleItems || a.Len() < SampleItems/2 {
		t.Errorf("%d items hashed of %d, want at most %d", a.Len(), n, SampleItems)
	}
	taken := 0
	for i := range a.Taken() {
		if !a.Take(i) {
			t.Fatalf("Taken gave %d, which Take leaves out", i)
		}
		taken++
	}
	if taken != a.Len() {
		t.Errorf("Taken gave %d items, the sample holds %d", taken, a.Len())
	}
	if a.Sum() != build(n, -1, true).Sum() {
		t.Error("the order of the items changed the hash")
	}
	if a.Sum() == build(n+1, -1, false).Sum() {
		t.Error("one more item hashed alike")
	}
	if a.Sum() == build(n, 0, false).Sum() || a.Sum() == build(n, a.step*(SampleItems/2), false).Sum() {
		t.Error("a sampled item's change hashed alike")
	}
	// An item is cut at SampleItemBytes.
	long := func(tail byte) string {
		s := NewSample(1)
		b := make([]byte, SampleItemBytes+10)
		b[len(b)-1] = tail
		s.Add(0, "s", 0, b)
		s.Add(5, "s", 5, []byte("not taken"))
		return s.Sum()
	}
	if long('a') != long('b') {
		t.Error("bytes past SampleItemBytes were hashed")
	}
	if NewSample(0).Sum() != "" {
		t.Error("an empty sample has a hash")
	}
}

// TestReadingStopsWhenCancelled: reading an inputs file stops once its
// context is done.
func TestReadingStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	in := `{"data":[{"session_id":"a","payloads":[{"x":1}]}]}`
	var d Dataset
	if err := ReadInputsContext(context.Background(), strings.NewReader(in), &d); err != nil || d.Len() != 1 {
		t.Fatalf("ReadInputsContext: %v, %d bodies", err, d.Len())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ReadInputsContext(ctx, strings.NewReader(in), &Dataset{}); err == nil {
		t.Error("a cancelled read went on")
	}
	n := 0
	err := EachSessionContext(ctx, strings.NewReader(in), func(json.RawMessage) error { n++; return nil })
	if err == nil || n != 0 {
		t.Errorf("EachSessionContext after cancel: %v, %d sessions", err, n)
	}
}
