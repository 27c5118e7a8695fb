package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestErrorBodies(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{})
	tests := []struct {
		name, method, path, body string
		code                     int
		typ, msgHas              string
	}{
		{"bad json", "POST", "/v1/chat/completions", `{"messages":`, 400, "invalid_request_error", "not a JSON object"},
		{"not an object", "POST", "/v1/chat/completions", `[1,2]`, 400, "invalid_request_error", "not a JSON object"},
		{"no messages", "POST", "/v1/chat/completions", `{"model":"m"}`, 400, "invalid_request_error", "messages is required"},
		{"empty messages", "POST", "/v1/chat/completions", `{"messages":[]}`, 400, "invalid_request_error", "messages is empty"},
		{"no role", "POST", "/v1/chat/completions", `{"messages":[{"content":"x"}]}`, 400, "invalid_request_error", "messages[0].role"},
		{"bad content", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, 400, "invalid_request_error", "messages[0].content"},
		{"no prompt", "POST", "/v1/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400, "invalid_request_error", "prompt is required"},
		{"bad prompt", "POST", "/v1/completions", `{"prompt":{"a":1}}`, 400, "invalid_request_error", "prompt must be"},
		{"zero max_tokens", "POST", "/v1/completions", `{"prompt":"x","max_tokens":0}`, 400, "invalid_request_error", "max_tokens must be at least 1"},
		{"huge max_tokens", "POST", "/v1/completions", `{"prompt":"x","max_completion_tokens":999999999}`, 400, "invalid_request_error", "max_completion_tokens 999999999 exceeds"},
		{"n>1", "POST", "/v1/completions", `{"prompt":"x","n":2}`, 400, "invalid_request_error", "n = 1"},
		{"stream_options without stream", "POST", "/v1/completions", `{"prompt":"x","stream_options":{"include_usage":true}}`, 400, "invalid_request_error", "stream_options"},
		{"unknown path", "GET", "/v1/audio/speech", ``, 404, "not_found_error", "no route for GET /v1/audio/speech"},
		{"embeddings needs POST", "GET", "/v1/embeddings", ``, 405, "invalid_request_error", "use POST"},
		{"wrong method", "GET", "/v1/chat/completions", ``, 405, "invalid_request_error", "use POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got apiError
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatalf("body is not an OpenAI error: %v", err)
			}
			if resp.StatusCode != tt.code || got.Error.Code != tt.code || got.Error.Type != tt.typ ||
				!strings.Contains(got.Error.Message, tt.msgHas) {
				t.Errorf("status %d body %+v, want %d %s containing %q", resp.StatusCode, got, tt.code, tt.typ, tt.msgHas)
			}
		})
	}
}

// failures sends n requests and returns which were answered 500.
func failures(t *testing.T, url string, n int) []bool {
	t.Helper()
	out := make([]bool, n)
	for i := range out {
		resp := post(t, t.Context(), url+"/v1/completions", `{"prompt":"x","max_tokens":1}`)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case 200:
		case 500:
			out[i] = true
			want := `{"error":{"message":"mock: injected failure","type":"server_error","param":null,"code":500}}` + "\n"
			if string(body) != want {
				t.Fatalf("500 body %q, want %q", body, want)
			}
		default:
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	return out
}

func TestErrorRateIsSeeded(t *testing.T) {
	t.Parallel()
	const n, rate = 400, 0.25
	s1, ts1 := newTestServer(t, Config{ErrorRate: rate, Seed: 42})
	_, ts2 := newTestServer(t, Config{ErrorRate: rate, Seed: 42})
	_, ts3 := newTestServer(t, Config{ErrorRate: rate, Seed: 43})
	a, b, c := failures(t, ts1.URL, n), failures(t, ts2.URL, n), failures(t, ts3.URL, n)
	count := 0
	for _, f := range a {
		if f {
			count++
		}
	}
	if got := float64(count) / n; got < rate-0.06 || got > rate+0.06 {
		t.Errorf("failure rate %.3f, want %.2f ± 0.06", got, rate)
	}
	if !cmp.Equal(a, b) {
		t.Error("same seed, different failures")
	}
	if cmp.Equal(a, c) {
		t.Error("different seeds, same failures")
	}
	if st := s1.Stats(); st.Errors != uint64(count) || st.Requests != n || st.Completed != uint64(n-count) {
		t.Errorf("Stats %+v, want %d errors of %d", st, count, n)
	}
}

// scrape parses GET /metrics into family name → (labels → value).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			key := name
			for _, l := range m.GetLabel() {
				if l.GetName() != "model_name" {
					key += "/" + l.GetValue()
				} else if l.GetValue() != "served" {
					t.Errorf("%s: model_name %q, want served", name, l.GetValue())
				}
			}
			switch {
			case m.Gauge != nil:
				out[key] = m.GetGauge().GetValue()
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			default:
				t.Errorf("%s: neither gauge nor counter", name)
			}
		}
	}
	return out
}

func TestMetricsWhileStreaming(t *testing.T) {
	t.Parallel()
	s, ts := newTestServer(t, Config{ITL: time.Hour, MaxRunning: 3, Model: "served"})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	const open = 5
	for range open {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions",
				strings.NewReader(`{"prompt":"four words of prompt","stream":true,"max_tokens":3}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// The end of the test cancels the streams, and may do so
				// before a queued one's headers have reached its client.
				if ctx.Err() == nil {
					t.Errorf("POST: %v", err)
				}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for st := s.Stats(); st.Running != 3 || st.Waiting != 2 || st.GeneratedTokens != 3; st = s.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("streams never settled: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	got := scrape(t, ts.URL)
	want := map[string]float64{
		"vllm:num_requests_running":         3,
		"vllm:num_requests_waiting":         2,
		"vllm:kv_cache_usage_perc":          1,
		"vllm:prompt_tokens_total":          12,
		"vllm:generation_tokens_total":      3,
		"vllm:request_success_total/length": 0,
		"vllm:request_success_total/stop":   0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("/metrics (-want +got):\n%s", diff)
	}
	cancel()
	wg.Wait()
}

func TestKVUsageWithoutCap(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	for _, tt := range []struct {
		running int64
		want    float64
	}{{0, 0}, {256, 0.5}, {512, 0.75}} {
		if got := s.kvUsage(tt.running); got != tt.want {
			t.Errorf("kvUsage(%d) = %v, want %v", tt.running, got, tt.want)
		}
	}
}

func TestStatsEndpoint(t *testing.T) {
	// Not parallel: timing is measured, so the test runs alone.
	_, ts := newTestServer(t, Config{TTFT: 2 * time.Millisecond})
	for range 3 {
		streamEvents(t, ts.URL+"/v1/completions", `{"prompt":"a b","stream":true,"max_tokens":4}`)
	}
	resp, err := http.Get(ts.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got Stats
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Requests != 3 || got.Completed != 3 || got.TTFTCount != 3 || got.PromptTokens != 6 ||
		got.GeneratedTokens != 12 || got.TTFTP50MS < 2 || got.TTFTP50MS > 50 { // never early; late only by load
		t.Errorf("/stats = %+v", got)
	}
}

func TestModelsAndHealth(t *testing.T) {
	t.Parallel()
	_, ts := newTestServer(t, Config{Model: "served"})
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/health"); code != 200 || body != "ok" {
		t.Errorf("/health = %d %q", code, body)
	}
	code, body := get("/v1/models")
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID, Object, OwnedBy string
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || code != 200 {
		t.Fatalf("/v1/models = %d %q: %v", code, body, err)
	}
	if got.Object != "list" || len(got.Data) != 1 || got.Data[0].ID != "served" || got.Data[0].Object != "model" {
		t.Errorf("/v1/models = %s", body)
	}
}

func TestStartAndClose(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, err := Start(ctx, ":0", Config{ITL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.URL(), "http://127.0.0.1:") {
		t.Errorf("URL() = %q", r.URL())
	}
	// An open stream must not hold Close up.
	resp := post(t, t.Context(), r.URL()+"/v1/completions", `{"prompt":"x","stream":true,"max_tokens":3}`)
	defer resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer ccancel()
	if err := r.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-r.Done():
	default:
		t.Error("Done not closed after Close returned")
	}
	if st := r.Server().Stats(); st.Canceled != 1 || st.Running != 0 {
		t.Errorf("after Close: %+v", st)
	}
	if _, err := http.Get(r.URL() + "/health"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr string
		cfg  Config
		has  string
	}{
		{"nonsense", Config{}, `address "nonsense"`},
		{"127.0.0.1:0", Config{ErrorRate: 2}, "Config.ErrorRate"},
		{"127.0.0.1:0", Config{StreamErrorRate: -1}, "Config.StreamErrorRate"},
		{"127.0.0.1:0", Config{StreamErrorAfter: -1}, "Config.StreamErrorAfter"},
		{"127.0.0.1:0", Config{StreamErrorShape: "nginx"}, `Config.StreamErrorShape "nginx" is not one of vllm, llamacpp`},
		{"127.0.0.1:0", Config{ITL: -1}, "Config.ITL"},
	} {
		_, err := Start(t.Context(), tt.addr, tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.has) {
			t.Errorf("Start(%q, %+v) = %v, want error containing %q", tt.addr, tt.cfg, err, tt.has)
		}
	}
	// A taken port is a wrapped listen error.
	r, err := Start(t.Context(), "127.0.0.1:0", Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	_, err = Start(t.Context(), r.Addr().String(), Config{})
	var opErr *net.OpError
	if err == nil || !errors.As(err, &opErr) {
		t.Errorf("second Start on %s = %v, want a wrapped net error", r.Addr(), err)
	}
}
