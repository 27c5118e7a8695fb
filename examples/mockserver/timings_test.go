package mockserver

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The mock's own account of a request, in each server's shape: its
// queue behind MaxRunning, its prefill (TTFT and the prompt's share) and
// its decode (the gaps between tokens), each within a margin of what it
// was told that holds on a busy machine: its timers run late, and a late
// first token shortens the decode after it (the tokens are due at fixed
// times from the first's plan).
const (
	tTTFT = 20 * time.Millisecond
	tITL  = 3 * time.Millisecond
	tOut  = 6 // tokens
)

// told is d in ms.
func told(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// believable reports whether a prefill and a decode (ms) are what the
// mock was told, as a busy machine lets it keep them: the prefill no
// shorter (its timer runs late, never early), the two together no
// shorter than told and at most 250 ms longer, the decode never negative
// (a late first token leaves less of it: the tokens after it are due at
// fixed times).
func believable(prefill, decode float64) bool {
	total := told(tTTFT + (tOut-1)*tITL)
	return prefill >= told(tTTFT)-0.05 && decode >= 0 && prefill+decode >= total-0.05 && prefill+decode <= total+250
}

func timingConfig(format string) Config {
	return Config{TTFT: tTTFT, ITL: tITL, Timings: format}
}

// TestTimingsOnTheOpenAIRoutes: llama.cpp's timings in a stream's last
// chunk and in a body, with queue_ms only in the mock's own format, and
// none by default.
func TestTimingsOnTheOpenAIRoutes(t *testing.T) {
	t.Parallel()
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":` + strconv.Itoa(tOut)
	for _, format := range []string{TimingsNone, TimingsLlamaCpp, TimingsMock} {
		_, ts := newTestServer(t, timingConfig(format))
		_, evs := streamEvents(t, ts.URL+"/v1/chat/completions", body+`,"stream":true}`)
		last := decode(t, evs[len(evs)-2].data) // before [DONE]
		resp := post(t, context.Background(), ts.URL+"/v1/chat/completions", body+"}")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		whole := decode(t, string(b))
		for where, m := range map[string]map[string]any{"stream": last, "body": whole} {
			tm, ok := m["timings"].(map[string]any)
			if format == TimingsNone {
				if ok {
					t.Errorf("%s: timings %v with none asked for", where, tm)
				}
				continue
			}
			num := func(k string) float64 {
				v, _ := tm[k].(json.Number).Float64()
				return v
			}
			if !ok || !believable(num("prompt_ms"), num("predicted_ms")) || num("predicted_n") != tOut {
				t.Errorf("%s %s: timings %v", format, where, tm)
			}
			if _, q := tm["queue_ms"]; q != (format == TimingsMock) {
				t.Errorf("%s %s: queue_ms %v", format, where, tm["queue_ms"])
			}
		}
	}
}

// TestTimingsOnTheNativeRoutes: TGI's headers on /generate, SGLang's
// meta_info on /generate with "text", Ollama's durations on /api/chat;
// with MaxRunning 1 and two requests at once, one of them queues for
// about the other's service.
func TestTimingsOnTheNativeRoutes(t *testing.T) {
	t.Parallel()
	cfg := timingConfig(TimingsNone)
	cfg.MaxRunning = 1
	_, ts := newTestServer(t, cfg)
	service := tTTFT + (tOut-1)*tITL
	two := func(path, body string, read func(resp *http.Response) (queue, prefill, decode float64)) {
		t.Helper()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var queues, services []float64
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := post(t, context.Background(), ts.URL+path, body)
				defer resp.Body.Close()
				q, p, d := read(resp)
				if !believable(p, d) {
					t.Errorf("%s: prefill %.2f, decode %.2f ms", path, p, d)
				}
				mu.Lock()
				queues, services = append(queues, q), append(services, p+d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		// The later waits for the earlier's service, as the mock stamped
		// it, less the gap between their arrivals, which a busy machine
		// widens (2.2 ms seen), plus the wake-up after the earlier's
		// slot is freed, which a busy machine stretches too (a 36 ms
		// service was followed by a 44 ms queue with other packages'
		// tests running): at least half of it, and well short of two
		// services, which a queue counting the service twice would be.
		later := 0
		if queues[1] > queues[0] {
			later = 1
		}
		if q, svc := queues[later], services[1-later]; q < svc/2 || q > 1.5*svc+3 {
			t.Errorf("%s: queues %v ms, want one of about the other's service (%.2f ms; %v asked)", path, queues, svc, service)
		}
	}
	two("/generate", `{"inputs":"hi","parameters":{"max_new_tokens":`+strconv.Itoa(tOut)+`}}`, func(resp *http.Response) (float64, float64, float64) {
		_, _ = io.Copy(io.Discard, resp.Body)
		h := func(k string) float64 { v, _ := strconv.ParseFloat(resp.Header.Get(k), 64); return v }
		if resp.Header.Get("X-Total-Time") == "" || resp.Header.Get("X-Time-Per-Token") == "" {
			t.Errorf("TGI headers %v", resp.Header)
		}
		// TGI does not split prefill from decode: its inference is both.
		inf := h("X-Inference-Time")
		return h("X-Queue-Time") + h("X-Validation-Time"), float64(tTTFT / time.Millisecond), inf - float64(tTTFT/time.Millisecond)
	})
	two("/generate", `{"text":"hi","sampling_params":{"max_new_tokens":`+strconv.Itoa(tOut)+`},"stream":true}`, func(resp *http.Response) (float64, float64, float64) {
		evs := readEvents(t, resp.Body)
		if len(evs) != tOut+1 || evs[len(evs)-1].data != "[DONE]" {
			t.Fatalf("SGLang stream: %d events", len(evs))
		}
		var raw struct {
			Meta map[string]any `json:"meta_info"`
		}
		_ = json.Unmarshal([]byte(evs[len(evs)-2].data), &raw)
		m := map[string]float64{}
		for k, v := range raw.Meta {
			if f, ok := v.(float64); ok {
				m[k] = f
			}
		}
		if raw.Meta["finish_reason"] == nil || m["e2e_latency"] <= 0 {
			t.Errorf("SGLang's last meta_info %v", raw.Meta)
		}
		return 1000 * m["queue_time"], 1000 * (m["prefill_finished_time"] - m["forward_entry_time"]), 1000 * (m["request_finished_ts"] - m["prefill_finished_time"])
	})
	two("/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"}],"options":{"num_predict":`+strconv.Itoa(tOut)+`}}`, func(resp *http.Response) (float64, float64, float64) {
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Errorf("Ollama Content-Type %q", ct)
		}
		var lines []map[string]any
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("Ollama line %q: %v", sc.Text(), err)
			}
			lines = append(lines, m)
		}
		last := lines[len(lines)-1]
		if len(lines) != tOut+1 || last["done"] != true || last["eval_count"] != float64(tOut) {
			t.Fatalf("Ollama stream: %d lines, last %v", len(lines), last)
		}
		ns := func(k string) float64 { return last[k].(float64) / 1e6 }
		return ns("load_duration"), ns("prompt_eval_duration"), ns("eval_duration")
	})
}

// TestSpansOverOTLP: with an endpoint the mock sends a span per request
// in vLLM's shape, under the trace id of the request's traceparent, its
// times in seconds; Close sends what is queued.
func TestSpansOverOTLP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*tracepb.Span
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var td tracepb.TracesData
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(b, &td) != nil {
			t.Errorf("export %s %s: not OTLP protobuf", r.URL.Path, r.Header.Get("Content-Type"))
		}
		mu.Lock()
		defer mu.Unlock()
		for _, rs := range td.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				got = append(got, ss.Spans...)
			}
		}
	}))
	defer collector.Close()
	cfg := timingConfig(TimingsNone)
	cfg.OTLPEndpoint = collector.URL + "/v1/traces"
	s, ts := newTestServer(t, cfg)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":`+strconv.Itoa(tOut)+`,"stream":true}`))
	req.Header.Set("Traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	req.Header.Set("X-Request-Id", trace)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("%d spans, want 1", len(got))
	}
	sp := got[0]
	attrs := map[string]float64{}
	var id string
	for _, kv := range sp.Attributes {
		attrs[kv.Key] = kv.Value.GetDoubleValue()
		if kv.Key == "gen_ai.request.id" {
			id = kv.Value.GetStringValue()
		}
	}
	if hexID := hex.EncodeToString(sp.TraceId); hexID != trace || sp.Name != "llm_request" || id != "chatcmpl-"+trace {
		t.Errorf("span %s %q, request id %q", hexID, sp.Name, id)
	}
	if !believable(1000*attrs["gen_ai.latency.time_in_model_prefill"], 1000*attrs["gen_ai.latency.time_in_model_decode"]) ||
		attrs["gen_ai.latency.time_to_first_token"] < attrs["gen_ai.latency.time_in_model_prefill"] || attrs["gen_ai.latency.e2e"] <= 0 {
		t.Errorf("attributes %v", attrs)
	}
}

// TestTimingsConfigChecked: the formats and the endpoint are checked.
func TestTimingsConfigChecked(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Timings: "vllm"}, {OTLPEndpoint: "localhost:4318"}, {OTLPEndpoint: "ftp://x/v1/traces"}} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: accepted", cfg)
		}
	}
	for _, cfg := range []Config{{Timings: "none"}, {Timings: TimingsMock, OTLPEndpoint: "http://127.0.0.1:4318/v1/traces"}} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}
