package endpoint

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/surgebench/surge/metrics"
)

const ms = int64(1e6)

// events reads an SSE file's data payloads (one data line per event).
func events(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

// decodeAll runs a type's decoder over events and returns the output and
// the last timing an event gave.
func decodeAll(t *testing.T, k Kind, evs [][]byte) (string, metrics.ServerTiming, metrics.Usage) {
	t.Helper()
	dec := (&Endpoint{Kind: k, Streaming: true}).NewDecoder()
	var out Output
	var st metrics.ServerTiming
	var u metrics.Usage
	for i, ev := range evs {
		d, err := dec.Event(nil, ev, &out)
		if err != nil || d.Err != nil {
			t.Fatalf("%s event %d: %v %v", k, i+1, err, d.Err)
		}
		if d.Server.Has != 0 {
			st = d.Server
		}
		if d.Usage.Present {
			u = d.Usage
		}
	}
	return string(out.Text), st, u
}

// Each server's account, read from its own shape: llama.cpp's timings in
// a real b4747 stream's last chunk, the mock's (with its queue), SGLang's
// meta_info, Ollama's durations; every value in nanoseconds, what the
// server did not give left out.
func TestServerTimingsFromResponses(t *testing.T) {
	t.Parallel()
	// llama.cpp b4747, captured: prompt_ms 13.931, predicted_ms 18.868.
	_, llama, _ := decodeAll(t, Chat, events(t, "../testdata/streams/llamacpp-b4747-real-1.sse"))
	if want := (metrics.ServerTiming{Source: metrics.TimingLlamaCpp, Has: metrics.ServerPrefill | metrics.ServerDecode,
		Prefill: 13_931_000, Decode: 18_868_000}); llama != want {
		t.Errorf("llama.cpp: %+v, want %+v", llama, want)
	}
	var out Output
	d, err := (&Endpoint{Kind: Chat}).NewDecoder().Body([]byte(`{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],`+
		`"timings":{"prompt_n":5,"prompt_ms":25.5,"predicted_n":3,"predicted_ms":10,"queue_ms":2.25}}`), &out)
	if want := (metrics.ServerTiming{Source: metrics.TimingMock, Has: metrics.ServerQueue | metrics.ServerPrefill | metrics.ServerDecode,
		Queue: 2_250_000, Prefill: 25_500_000, Decode: 10 * ms}); err != nil || d.Server != want {
		t.Errorf("the mock's: %+v (%v), want %+v", d.Server, err, want)
	}
	text, sg, u := decodeAll(t, SGLangGenerate, events(t, "testdata/sglang-generate.sse"))
	if text != "Hello there!" || u.PromptTokens != 12 || u.CompletionTokens != 3 {
		t.Errorf("SGLang: text %q, usage %+v", text, u)
	}
	want := metrics.ServerTiming{Source: metrics.TimingSGLang,
		Has:   metrics.ServerQueue | metrics.ServerPrefill | metrics.ServerDecode | metrics.ServerFirstToken | metrics.ServerTotal,
		Queue: 12 * ms, Prefill: 45 * ms, Decode: 400 * ms, FirstToken: 57 * ms, Total: 457 * ms}
	if !near(sg, want) {
		t.Errorf("SGLang: %+v, want %+v", sg, want)
	}
	b, err := os.ReadFile("testdata/ollama-chat.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	text, ol, u := decodeAll(t, OllamaChat, lines)
	if text != "Hello there" || u.PromptTokens != 12 || u.CompletionTokens != 2 {
		t.Errorf("Ollama: text %q, usage %+v", text, u)
	}
	if want := (metrics.ServerTiming{Source: metrics.TimingOllama,
		Has:   metrics.ServerQueue | metrics.ServerPrefill | metrics.ServerDecode | metrics.ServerTotal,
		Queue: 12 * ms, Prefill: 45 * ms, Decode: 400 * ms, Total: 457 * ms}); ol != want {
		t.Errorf("Ollama: %+v, want %+v", ol, want)
	}
}

// near compares timings to the microsecond (SGLang's stamps are floats
// of Unix seconds).
func near(a, b metrics.ServerTiming) bool {
	close := func(x, y int64) bool { return x-y < 1000 && y-x < 1000 }
	return a.Source == b.Source && a.Has == b.Has && close(a.Queue, b.Queue) && close(a.Prefill, b.Prefill) &&
		close(a.Decode, b.Decode) && close(a.FirstToken, b.FirstToken) && close(a.Total, b.Total)
}

// TGI's headers: its queue is validation and queue; it does not split
// prefill from decode; a header that is not a number is not believed.
func TestServerHeaders(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("x-queue-time", "12")
	h.Set("x-validation-time", "1")
	h.Set("x-inference-time", "80")
	h.Set("x-time-per-token", "8")
	h.Set("x-total-time", "95")
	if got, want := ServerHeaders(h), (metrics.ServerTiming{Source: metrics.TimingTGI, Has: metrics.ServerQueue | metrics.ServerTotal,
		Queue: 13 * ms, Total: 95 * ms}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	h.Del("x-total-time")
	h.Set("x-compute-time", "90")
	if got := ServerHeaders(h); got.Total != 90*ms {
		t.Errorf("x-compute-time: %+v", got)
	}
	h.Set("x-queue-time", "-5")
	if got := ServerHeaders(h); got.Has&metrics.ServerQueue != 0 {
		t.Errorf("a negative queue was believed: %+v", got)
	}
	if got := ServerHeaders(http.Header{"Content-Type": {"application/json"}}); got.Known() {
		t.Errorf("no TGI headers: %+v", got)
	}
}

// koboldcpp 1.76's perf, as its gpttype_adapter.cpp computes it: paces
// per token (ms), so the decode is the pace times the tokens, and the
// prefill is unknown (the prompt's length is not given).
func TestParseKoboldPerf(t *testing.T) {
	t.Parallel()
	p, err := ParseKoboldPerf([]byte(`{"last_process": 0.24, "last_eval": 43.9, "last_token_count": 16, "last_seed": -1, "total_gens": 7, "stop_reason": 1, "total_img_gens": 0, "queue": 0, "idle": 1, "hordeexitcounter": -1, "uptime": 29.5, "idletime": 1.2, "quiet": false}`))
	if err != nil || p.Gens != 7 || p.Timing != (metrics.ServerTiming{Source: metrics.TimingKobold,
		Has: metrics.ServerDecode, Decode: 702_400_000}) {
		t.Errorf("%+v %v", p, err)
	}
	for _, bad := range []string{`{}`, `not json`, `{"last_eval":"x","last_token_count":1}`} {
		if _, err := ParseKoboldPerf([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// FuzzServerTiming: a server's account, in any shape, never gives a
// negative or unbelievable duration, nor a source without a duration.
func FuzzServerTiming(f *testing.F) {
	for _, s := range []string{
		`{"choices":[],"timings":{"prompt_ms":13.931,"predicted_ms":18.868,"queue_ms":1e-3}}`,
		`{"text":"a","meta_info":{"queue_time":0.01,"forward_entry_time":1.5,"prefill_finished_time":1.25,"request_received_ts":1,"request_finished_ts":3,"e2e_latency":2}}`,
		`{"message":{"content":"a"},"done":true,"load_duration":-1,"prompt_eval_duration":1e30,"eval_duration":5,"total_duration":6}`,
		`{"last_process":-0.5,"last_eval":1e300,"last_token_count":3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(what string, st metrics.ServerTiming) {
			if (st.Source == metrics.TimingUnknown) != (st.Has == 0) {
				t.Fatalf("%s: %+v: a source without durations, or durations without one", what, st)
			}
			for _, d := range []int64{st.Queue, st.Prefill, st.Decode, st.FirstToken, st.Total} {
				if d < 0 || d > maxServerNs {
					t.Fatalf("%s: %+v: a duration no server could mean", what, st)
				}
			}
		}
		for _, k := range []Kind{Chat, SGLangGenerate, OllamaChat} {
			var out Output
			d, _ := (&Endpoint{Kind: k}).NewDecoder().Event(nil, data, &out)
			check(string(k), d.Server)
		}
		p, _ := ParseKoboldPerf(data)
		check("koboldcpp", p.Timing)
		h := http.Header{}
		for i, v := range strings.SplitN(string(data), ",", 4) {
			h.Set([]string{"X-Queue-Time", "X-Inference-Time", "X-Validation-Time", "X-Total-Time"}[i], v)
		}
		check("TGI", ServerHeaders(h))
	})
}
