package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// Every endpoint type runs against the embedded mock, streamed and not,
// with its real wire format: no errors, and the metrics the type has.
func TestEveryEndpointTypeAgainstTheMock(t *testing.T) {
	t.Parallel()
	for _, k := range endpoint.Kinds() {
		for _, streaming := range []bool{false, true} {
			info := k.Info()
			name := string(k)
			if streaming {
				name += "/streaming"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				c := endpointConfig(t, k, streaming, "mock", dir)
				// Sessions with their own connection and id work for every type.
				c.ConnectionReuse, c.SessionHeader = "sticky-user-sessions", "X-Correlation-ID"
				var out, log bytes.Buffer
				res, err := runConfig(context.Background(), c, &out, &log)
				if err != nil {
					t.Fatalf("%v\n%s", err, log.String())
				}
				if res.AllFailed() {
					t.Fatalf("every request failed:\n%s", out.String())
				}
				m := apptest.ReadExport(t, dir)
				if n, bad := apptest.RunAvg(t, m, "request_count"), apptest.RunAvg(t, m, "error_request_count"); n != 6 || bad != 0 {
					t.Fatalf("request_count %v error_request_count %v, want 6 and 0\n%s", n, bad, out.String())
				}
				if lat := apptest.RunAvg(t, m, "request_latency"); !(lat > 0) {
					t.Errorf("request_latency %v", lat)
				}
				if k != endpoint.Raw { // raw bodies come from a file of unknown lengths
					wantISL := 32.0
					if info.Rankings {
						wantISL = 16 + 3*32 // the query and its 3 passages
					}
					if isl := apptest.RunAvg(t, m, "input_sequence_length"); isl != wantISL {
						t.Errorf("input_sequence_length %v, want %v", isl, wantISL)
					}
				}
				if streaming && !info.Streams {
					// Sent whole, as AIPerf does, with a warning.
					if want := "endpoint type " + string(k) + " does not stream"; !strings.Contains(log.String(), want) {
						t.Errorf("log does not say %q:\n%s", want, log.String())
					}
				}
				_, hasTTFT := m["time_to_first_token"]
				if hasTTFT != (streaming && info.Streams && info.ProducesTokens) {
					t.Errorf("time_to_first_token present %v, want %v", hasTTFT, streaming && info.Streams && info.ProducesTokens)
				}
				osl, hasOSL := m["output_sequence_length"].(map[string]any)
				if info.ProducesTokens && (!hasOSL || math.Abs(osl["avg"].(float64)-8) > 0.5) {
					t.Errorf("output_sequence_length %v, want 8 (the --osl cap)", m["output_sequence_length"])
				}
				if !info.ProducesTokens && hasOSL {
					t.Errorf("a %s run reports output_sequence_length %v", k, osl)
				}
				// Types without output count their throughput in inputs:
				// texts embedded, passages ranked.
				_, hasInputs := m["input_throughput"]
				_, hasOutputTput := m["output_token_throughput"]
				if hasInputs == info.ProducesTokens || hasOutputTput != info.ProducesTokens {
					t.Errorf("input_throughput present %v, output_token_throughput present %v", hasInputs, hasOutputTput)
				}
				if !info.ProducesTokens {
					perRequest := 1.0
					if info.Rankings {
						perRequest = 3
					}
					rps, in := apptest.RunAvg(t, m, "request_throughput"), apptest.RunAvg(t, m, "input_throughput")
					if math.Abs(in-perRequest*rps) > 1e-3*in {
						t.Errorf("input_throughput %v, want %v × request_throughput %v", in, perRequest, rps)
					}
					tokens := apptest.RunAvg(t, m, "total_isl") / apptest.RunAvg(t, m, "benchmark_duration")
					if got := apptest.RunAvg(t, m, "input_token_throughput"); math.Abs(got-tokens) > 1e-3*tokens {
						t.Errorf("input_token_throughput %v, want %v", got, tokens)
					}
				}
			})
		}
	}
}

// endpointConfig is a run of 6 requests of type k against url: rankings
// queries of 16 tokens with 3 passages of 32, template and raw bodies for
// the mock's chat and completions routes.
func endpointConfig(t *testing.T, k endpoint.Kind, streaming bool, url, dir string) cmdline.Config {
	c := apptest.RunConfig(url, dir)
	c.EndpointType, c.Streaming, c.ReasoningFormat = string(k), streaming, "auto"
	c.RankingsPassagesMean, c.RankingsPassageTokens, c.RankingsQueryTokens = 3, 32, 16
	c.RequestCount, c.Concurrency = 6, "3"
	switch k {
	case endpoint.Template:
		c.EndpointTemplate = `{"model": {{json .Model}}, "messages": [{"role": "user", "content": {{json .Text}}}], "max_tokens": {{.MaxTokens}}{{if .Stream}}, "stream": true{{end}}}`
		c.CustomEndpoint = "/v1/chat/completions"
	case endpoint.Raw:
		// raw sends each prompt as the body: a file of ready bodies.
		c.CustomEndpoint = "/v1/completions"
		c.InputFile = writeRawBodies(t, streaming)
	}
	return c
}

// writeRawBodies writes a single_turn JSONL whose texts are completions
// request bodies.
func writeRawBodies(t *testing.T, streaming bool) string {
	t.Helper()
	var b strings.Builder
	for i := range 3 {
		body := `{"model":"m","prompt":"raw body ` + string(rune('a'+i)) + `","max_tokens":8`
		if streaming {
			body += `,"stream":true`
		}
		body += `}`
		b.WriteString(`{"text":` + quote(body) + "}\n")
	}
	return writeTemp(t, "raw.jsonl", b.String())
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A type the server does not serve fails every request with a message
// naming the type and the path tried.
func TestUnservedEndpointNamesTypeAndPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig("mock", dir)
	c.EndpointType, c.CustomEndpoint, c.Streaming = "chat", "/v1/nowhere", false
	var out, log bytes.Buffer
	res, err := runConfig(context.Background(), c, &out, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !res.AllFailed() {
		t.Fatal("requests to an unserved path succeeded")
	}
	if want := "the server does not serve endpoint type chat at POST /v1/nowhere"; !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
		t.Errorf("summary does not say %q:\n%s", want, out.String())
	}
}

func TestEndpointFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mod  func(c *cmdline.Config)
		want string
	}{
		{func(c *cmdline.Config) { c.EndpointType = "template" }, "--endpoint-template"},
		{func(c *cmdline.Config) { c.EndpointType, c.EndpointTemplate = "template", `{"a": 1}` }, "give --endpoint"},
		{func(c *cmdline.Config) { c.EndpointTemplate = `{}` }, "is for --endpoint-type template"},
		{func(c *cmdline.Config) { c.ReasoningFormat = "xml" }, "--reasoning-format"},
		{func(c *cmdline.Config) { c.ResponseField = "a[" }, "--response-field"},
		{func(c *cmdline.Config) { c.EndpointType = "rankings" }, "cohere_rankings"},
		{func(c *cmdline.Config) { c.ConnectionReuse = "sticky" }, "--connection-reuse-strategy"},
		{func(c *cmdline.Config) { c.EndpointType = "raw" }, "--endpoint-type raw needs --input-file"},
		{func(c *cmdline.Config) {
			c.EndpointType, c.InputFile = "raw", writeTemp(t, "p.jsonl", `{"text": "not a body"}`+"\n")
		}, "p.jsonl: conversation"},
		{func(c *cmdline.Config) { c.EndpointType, c.CustomEndpoint = "template", "" }, "needs --endpoint-template (the request body as a Go template) and --endpoint"},
		{func(c *cmdline.Config) {
			c.EndpointType, c.Streaming, c.RankingsPassagesMean = "nim_rankings", false, 0
		}, "--rankings-passages-mean"},
		{func(c *cmdline.Config) {
			c.EndpointType, c.Streaming, c.RankingsPassagesStddev = "nim_rankings", false, -1
		}, "--rankings-passages-stddev"},
		{func(c *cmdline.Config) {
			c.EndpointType, c.Streaming, c.RankingsPassageTokens = "nim_rankings", false, 0
		}, "--rankings-passages-prompt-token-mean"},
		{func(c *cmdline.Config) {
			c.EndpointType, c.Streaming, c.RankingsQueryTokens = "nim_rankings", false, -5
		}, "--rankings-query-prompt-token-mean"},
	} {
		c := apptest.RunConfig("mock", t.TempDir())
		c.ReasoningFormat, c.RankingsPassagesMean, c.RankingsPassageTokens = "auto", 1, 550
		tc.mod(&c)
		_, err := runConfig(context.Background(), c, &bytes.Buffer{}, &bytes.Buffer{})
		var ue *cmdline.UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want a usage error containing %q", err, tc.want)
		}
	}
}

// A server speaking another API fails every request with one message that
// names the missing field, and the summary counts them under it.
func TestWrongShapeIsOneCountedError(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data:{\"index\":%d,\"token\":{\"id\":1,\"text\":\" a\",\"special\":false},\"generated_text\":null,\"details\":null}\n\n", i)
		}
	}))
	defer ts.Close()
	dir := t.TempDir()
	var out, log bytes.Buffer
	if _, err := runConfig(context.Background(), apptest.RunConfig(ts.URL, dir), &out, &log); err != nil {
		t.Fatal(err)
	}
	sum, _ := json.Marshal(apptest.ReadExport(t, dir)["error_summary"])
	want := `[{"count":12,"error_details":{"code":200,"message":"response does not match endpoint type \"chat\": the first event has no \"choices\" field","type":"invalid_response"}}]`
	if string(sum) != want {
		t.Errorf("error_summary %s, want %s", sum, want)
	}
}

// Every type, streamed and not, pointed at a server of another API: each
// request fails with one message naming the type and the field its first
// event or body lacked, and the summary counts them all on one line.
func TestEveryEndpointTypeNamesAWrongShapeOnce(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if body["stream"] != true && !strings.HasSuffix(r.URL.Path, "_stream") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"something.else","value":1}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			fmt.Fprint(w, "data: {\"object\":\"something.else\",\"value\":1}\n\n")
		}
	}))
	t.Cleanup(ts.Close)
	for _, k := range endpoint.Kinds() {
		for _, streaming := range []bool{false, true} {
			if streaming && !k.Info().Streams {
				continue
			}
			name := string(k)
			if streaming {
				name += "/streaming"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				c := endpointConfig(t, k, streaming, ts.URL, dir)
				var out bytes.Buffer
				if _, err := runConfig(context.Background(), c, &out, io.Discard); err != nil {
					t.Fatal(err)
				}
				var errs []struct {
					Count   int `json:"count"`
					Details struct {
						Message string `json:"message"`
					} `json:"error_details"`
				}
				b, _ := json.Marshal(apptest.ReadExport(t, dir)["error_summary"])
				if err := json.Unmarshal(b, &errs); err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf("response does not match endpoint type %q: ", k)
				if len(errs) != 1 || errs[0].Count != 6 || !strings.HasPrefix(errs[0].Details.Message, want) || !strings.HasSuffix(errs[0].Details.Message, " field") {
					t.Errorf("error_summary %s, want one line of 6 starting %q", b, want)
				}
			})
		}
	}
}
