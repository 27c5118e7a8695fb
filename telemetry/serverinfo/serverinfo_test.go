package serverinfo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/telemetry"
)

// The answers below follow each project's handler: vLLM's /version
// (vllm/entrypoints/openai/api_server.py) and model card (max_model_len,
// root); SGLang's /get_server_info (its ServerArgs flattened with the
// scheduler info, internal_states and version: api_key among them);
// llama.cpp's /props (tools/server/server.cpp: default_generation_settings,
// total_slots, model_path, chat_template, build_info); TGI's /info (the
// router's Info struct); Ollama's /api/version.
const (
	vllmModels = `{"object":"list","data":[{"id":"meta-llama/Llama-3.1-8B-Instruct","object":"model","created":1,"owned_by":"vllm",` +
		`"root":"/models/llama-3.1-8b","parent":null,"max_model_len":8192,"permission":[{"id":"x","allow_sampling":true}]}]}`
	sglangInfo = `{"model_path":"Qwen/Qwen2.5-7B-Instruct","tokenizer_path":"Qwen/Qwen2.5-7B-Instruct","served_model_name":"qwen",` +
		`"api_key":"sk-do-not-keep","admin_api_key":"adm","tp_size":2,"dp_size":1,"dtype":"auto","kv_cache_dtype":"auto",` +
		`"context_length":null,"chunked_prefill_size":8192,"mem_fraction_static":0.88,"disable_radix_cache":false,` +
		`"max_total_num_tokens":500000,"internal_states":[{"last_gen_throughput":12.5}],"version":"0.4.6.post1"}`
	llamaProps = `{"default_generation_settings":{"id":0,"n_ctx":4096,"params":{"n_predict":-1,"temperature":0.8}},"total_slots":4,` +
		`"model_path":"/models/qwen2.5-0.5b-instruct-q4_k_m.gguf","modalities":{"vision":false,"audio":false},` +
		`"chat_template":"{% for m in messages %}{{ m.content }}{% endfor %}","bos_token":"<s>","eos_token":"</s>","build_info":"b5124-bc091a4d"}`
	tgiInfo = `{"model_id":"bigscience/bloom-560m","model_sha":"e985a63cdc139290c5f700ff1929f0b5942cced2","model_dtype":"torch.float16",` +
		`"model_device_type":"cuda","model_pipeline_tag":"text-generation","max_concurrent_requests":128,"max_best_of":2,` +
		`"max_stop_sequences":4,"max_input_tokens":1024,"max_total_tokens":2048,"validation_workers":2,"max_client_batch_size":4,` +
		`"router":"text-generation-router","version":"3.0.1","sha":null,"docker_label":null}`
	ollamaModels = `{"object":"list","data":[{"id":"llama3.2:latest","object":"model","created":1733000000,"owned_by":"library"},` +
		`{"id":"qwen2.5:7b","object":"model","created":1733000000,"owned_by":"library"}]}`
)

// fake serves the given answers (path → body) and 404 elsewhere; it
// demands the bearer token, which the probe must send and never keep.
func fake(t *testing.T, answers map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, ok := answers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

var auth = WithHeader(http.Header{"Authorization": {"Bearer tok-123"}})

func TestProbeEngines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answers map[string]string
		want    Facts
	}{
		{"vllm", map[string]string{"/version": `{"version":"0.8.5.post1"}`, "/v1/models": vllmModels},
			Facts{Engine: VLLM, Version: "0.8.5.post1", Model: "meta-llama/Llama-3.1-8B-Instruct",
				Flags: map[string]string{"max_model_len": "8192", "root": "/models/llama-3.1-8b"}}},
		{"sglang", map[string]string{"/get_server_info": sglangInfo, "/v1/models": `{"object":"list","data":[{"id":"qwen","max_model_len":32768}]}`},
			Facts{Engine: SGLang, Version: "0.4.6.post1", Model: "qwen",
				Flags: map[string]string{"tp_size": "2", "dp_size": "1", "dtype": "auto", "kv_cache_dtype": "auto",
					"chunked_prefill_size": "8192", "mem_fraction_static": "0.88", "disable_radix_cache": "false", "max_model_len": "32768"}}},
		{"llama.cpp", map[string]string{"/props": llamaProps, "/v1/models": `{"object":"list","data":[{"id":"qwen2.5-0.5b"}]}`},
			Facts{Engine: LlamaCPP, Version: "b5124-bc091a4d", Model: "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
				Flags: map[string]string{"total_slots": "4", "n_ctx": "4096", "n_predict": "-1"}}},
		{"tgi", map[string]string{"/info": tgiInfo},
			Facts{Engine: TGI, Version: "3.0.1", Model: "bigscience/bloom-560m",
				Flags: map[string]string{"model_dtype": "torch.float16", "model_device_type": "cuda",
					"model_sha": "e985a63cdc139290c5f700ff1929f0b5942cced2", "max_concurrent_requests": "128", "max_best_of": "2",
					"max_stop_sequences": "4", "max_input_tokens": "1024", "max_total_tokens": "2048", "validation_workers": "2",
					"max_client_batch_size": "4", "router": "text-generation-router"}}},
		{"ollama", map[string]string{"/api/version": `{"version":"0.6.5"}`, "/v1/models": ollamaModels},
			Facts{Engine: Ollama, Version: "0.6.5", Model: "llama3.2:latest", Flags: map[string]string{"models": "llama3.2:latest,qwen2.5:7b"}}},
		{"a model list alone (the mock)", map[string]string{"/v1/models": `{"object":"list","data":[{"id":"mock"}]}`},
			Facts{Model: "mock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Probe(context.Background(), fake(t, tc.answers), auth)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, *got); d != "" {
				t.Errorf("facts (-want +got):\n%s", d)
			}
			b, _ := json.Marshal(got)
			for _, secret := range []string{"sk-do-not-keep", "adm", "tok-123"} {
				if strings.Contains(string(b), secret) {
					t.Errorf("facts keep a secret %q: %s", secret, b)
				}
			}
		})
	}
}

// TestProbeSaysNothing: a server that answers none of the endpoints (or
// answers every path with a page, as a web app's fallback route does) is
// ErrNothingSaid with what each endpoint answered.
func TestProbeSaysNothing(t *testing.T) {
	t.Parallel()
	client := &http.Client{}
	defer client.CloseIdleConnections()
	_, err := Probe(context.Background(), fake(t, nil), auth, WithClient(client))
	if !errors.Is(err, ErrNothingSaid) || !strings.Contains(err.Error(), "GET /props: 404") {
		t.Errorf("404 everywhere: %v", err)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<!doctype html><title>app</title>"))
	}))
	defer page.Close()
	_, err = Probe(context.Background(), page.URL)
	if !errors.Is(err, ErrNothingSaid) || !strings.Contains(err.Error(), "not sglang's answer") {
		t.Errorf("a page everywhere: %v", err)
	}
	if _, err := Probe(context.Background(), "http://127.0.0.1:1"); !errors.Is(err, ErrNothingSaid) {
		t.Errorf("nothing listening: %v", err)
	}
}

// TestProbeBounded: a server that never answers costs the probe its
// timeout, no more (the server sees every request cancelled); an answer
// past the size bound is not read.
func TestProbeBounded(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-time.After(time.Minute):
		}
	}))
	defer hang.Close()
	start := time.Now()
	_, err := Probe(context.Background(), hang.URL, WithTimeout(200*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNothingSaid) {
		t.Errorf("hanging server: %v, want the deadline", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("probe took %v against a 200 ms bound", took)
	}
	for deadline := time.Now().Add(10 * time.Second); cancelled.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := cancelled.Load(); n != 1 {
		t.Errorf("the server saw %d requests cancelled, want the one asked before the bound", n)
	}
	// Each request has its own bound: a path that hangs costs that, and
	// the next path is still asked.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/get_server_info":
			<-r.Context().Done()
		case "/props":
			_, _ = w.Write([]byte(llamaProps))
		default:
			http.NotFound(w, r)
		}
	}))
	defer slow.Close()
	if f, err := Probe(context.Background(), slow.URL, WithRequestTimeout(100*time.Millisecond)); err != nil || f.Engine != LlamaCPP {
		t.Errorf("after a path that hangs: %+v, %v", f, err)
	}

	big := `{"build_info":"b1","chat_template":"` + strings.Repeat("x", 4096) + `"}`
	var skipped []error
	_, err = Probe(context.Background(), fake(t, map[string]string{"/props": big}), auth, WithMaxBody(1024), WithSkipped(func(err error) { skipped = append(skipped, err) }))
	if !errors.Is(err, ErrNothingSaid) || !strings.Contains(err.Error(), "the answer to GET /props is over the 1 KiB limit") {
		t.Errorf("an answer past the bound: %v", err)
	}
	if len(skipped) != 1 || skipped[0].Error() != "the answer to GET /props is over the 1 KiB limit" {
		t.Errorf("skipped %v, want the one answer past the bound", skipped)
	}
	f, err := Probe(context.Background(), fake(t, map[string]string{"/props": big}), auth)
	if err != nil || f.Engine != LlamaCPP {
		t.Errorf("the same answer within the default bound: %+v, %v", f, err)
	}
	long := `{"version":"` + strings.Repeat("9", 1000) + `"}`
	if f, _ := Probe(context.Background(), fake(t, map[string]string{"/version": long}), auth); f == nil || len(f.Version) != maxValue {
		t.Errorf("a 1000-character version kept as %+v, want it cut to %d", f, maxValue)
	}
}

// threaded is an HTTP/1.1 server with a fixed number of threads, each
// serving one connection at a time for as long as its client keeps it
// open, as llama.cpp's server does (a 1-slot server has three): the
// connections past them wait in the listen queue.
func threaded(t *testing.T, threads int, answers map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	serve := func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, ok := answers[req.URL.Path]
			resp := &http.Response{StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{},
				Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Close: req.Close}
			if !ok {
				resp.StatusCode, resp.Body, resp.ContentLength = http.StatusNotFound, http.NoBody, 0
			}
			if resp.Write(c) != nil || req.Close {
				return
			}
		}
	}
	for range threads {
		go func() {
			for c := range conns {
				serve(c)
			}
		}()
	}
	return "http://" + ln.Addr().String()
}

// TestProbeNamesASmallServer: a server with a single HTTP thread (fewer
// than the endpoints asked) is still named, even through a client that
// keeps connections open: one request at a time, each connection closed
// with its answer.
func TestProbeNamesASmallServer(t *testing.T) {
	t.Parallel()
	url := threaded(t, 1, map[string]string{"/props": llamaProps, "/v1/models": `{"data":[{"id":"tiny"}]}`})
	keeper := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer keeper.CloseIdleConnections()
	f, err := Probe(context.Background(), url, WithClient(keeper))
	if err != nil || f.Engine != LlamaCPP || f.Version != "b5124-bc091a4d" || f.Model != "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf" {
		t.Errorf("facts %+v, %v; want llama.cpp b5124-bc091a4d named", f, err)
	}
}

// driverSource is a GPU source that knows its driver, as NVML's does.
type driverSource struct{ telemetry.GPUSourceFunc }

func (driverSource) DriverVersion() (string, error) { return "550.54.15", nil }

func TestGPUs(t *testing.T) {
	t.Parallel()
	samples := []telemetry.GPUSample{
		{Index: 0, Name: "NVIDIA H100 80GB HBM3", MemTotal: 80 << 30},
		{Index: 1, Name: "NVIDIA H100 80GB HBM3", MemTotal: 80 << 30},
	}
	read := telemetry.GPUSourceFunc(func(context.Context) ([]telemetry.GPUSample, error) { return samples, nil })
	got, err := GPUs(context.Background(), driverSource{read})
	if err != nil {
		t.Fatal(err)
	}
	want := []GPU{{0, "NVIDIA H100 80GB HBM3", 80 << 10, "550.54.15"}, {1, "NVIDIA H100 80GB HBM3", 80 << 10, "550.54.15"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("GPUs (-want +got):\n%s", d)
	}
	f := &Facts{Engine: VLLM, Version: "0.8.5", Model: "m", Flags: map[string]string{"max_model_len": "8192"}, GPUs: got}
	if s := f.String(); s != "vllm 0.8.5, model m, max_model_len=8192, 2× NVIDIA H100 80GB HBM3 (driver 550.54.15)" {
		t.Errorf("String() = %q", s)
	}
	// A source without a driver: the names alone.
	got, _ = GPUs(context.Background(), read)
	if got[0].Driver != "" || GPUSummary(append(got, GPU{Name: ""})) != "2× NVIDIA H100 80GB HBM3 + 1× GPU" {
		t.Errorf("without a driver: %+v, %q", got, GPUSummary(got))
	}
	if _, err := GPUs(context.Background(), nil); err == nil {
		t.Error("no source, no error")
	}
	fail := telemetry.GPUSourceFunc(func(context.Context) ([]telemetry.GPUSample, error) { return nil, errors.New("nvml: gone") })
	if _, err := GPUs(context.Background(), fail); err == nil {
		t.Error("a failing source, no error")
	}
	if (*Facts)(nil).String() != "unknown" || (&Facts{}).String() != "unknown" {
		t.Error("empty facts are not unknown")
	}
}

// FuzzParse feeds every shape's reader arbitrary answers: none may panic,
// and whatever they keep is bounded.
func FuzzParse(f *testing.F) {
	for _, s := range []string{sglangInfo, llamaProps, tgiInfo, vllmModels, ollamaModels, `{"version":"1"}`, `[]`, `null`, `{"version":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parsers := []func([]byte) (*Facts, bool){ParseSGLang, ParseLlamaCPP, ParseTGI, ParseVersion(VLLM)}
		for _, p := range parsers {
			if facts, ok := p(b); ok {
				checkBounded(t, facts)
			}
		}
		if facts := ParseModels(b); facts != nil {
			checkBounded(t, facts)
		}
	})
}

func checkBounded(t *testing.T, f *Facts) {
	t.Helper()
	if len(f.Flags) > maxFlags || len(f.Version) > maxValue || len(f.Model) > maxValue {
		t.Errorf("unbounded facts: %d flags, version %d, model %d bytes", len(f.Flags), len(f.Version), len(f.Model))
	}
	for k, v := range f.Flags {
		if len(v) > maxValue {
			t.Errorf("flag %s: %d bytes", k, len(v))
		}
	}
}
