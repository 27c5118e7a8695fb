package mockserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	`{"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"a b"},{"type":"image_url","image_url":{"url":"x"}}]}]}`,
	`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,aGk="}},{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=","format":"wav"}}]}]}`,
	`{"messages":[{"role":"assistant","content":null,"tool_calls":[]}],"max_completion_tokens":2}`,
	`{"prompt":"one two three","max_tokens":2,"ignore_eos":true}`,
	`{"prompt":["one"],"max_tokens":1}`,
	`{"prompt":[1,2,3],"max_tokens":1}`,
	`{"prompt":[[1,2]],"max_tokens":1}`,
	`{"prompt":{"x":1}}`,
	`{"messages":`,
	`null`,
	`{"max_tokens":-1}`,
	`{"n":2,"prompt":"x"}`,
}

// FuzzParseRequest checks that no body panics the parser, that every
// rejection is a 400-class error, and that accepted requests are sane.
func FuzzParseRequest(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, completions bool) {
		kind := chatAPI
		if completions {
			kind = completionsAPI
		}
		r, err := words.parseRequest(body, kind, 64)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("error %v does not wrap errBadRequest", err)
			}
			return
		}
		if r.MaxTokens < 0 || r.MaxTokens > 64 || r.PromptTokens < 0 {
			t.Fatalf("accepted %q as %+v", body, r)
		}
	})
}

// FuzzHandler drives whole requests through ServeHTTP: any body gets 200
// or 400, never a panic or a hang.
func FuzzHandler(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "/v1/chat/completions")
		f.Add(s, "/v1/completions")
	}
	s := New(Config{MaxOutputTokens: 64})
	f.Fuzz(func(t *testing.T, body, path string) {
		if path != "/v1/completions" {
			path = "/v1/chat/completions"
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		switch w.Code {
		case 200:
		case 400:
			if !strings.Contains(w.Body.String(), `"type":"invalid_request_error"`) {
				t.Fatalf("400 body %q", w.Body.String())
			}
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}

// FuzzOtherRequest feeds the non-chat APIs' request parsing arbitrary
// bodies: it must reject or count them, never panic, and never count a
// negative length.
func FuzzOtherRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":[{"role":"user","content":"hi there"}],"max_output_tokens":4,"stream":true}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`,
		`{"inputs":"a b c","parameters":{"max_new_tokens":3}}`,
		`{"input":["a","b c"]}`,
		`{"query":"q","documents":["d"]}`,
		`{"query":{"text":"q"},"passages":[{"text":"p"}]}`,
		`{"query":"q","texts":["a b"]}`,
	} {
		for api := range otherAPI(nimRankingAPI + 1) {
			f.Add(uint8(api), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, api uint8, body []byte) {
		var req otherRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		prompt, items, err := words.countOther(otherAPI(api%uint8(nimRankingAPI+1)), &req)
		if err == nil && (prompt < 0 || items < 0) {
			t.Fatalf("counted %d words, %d items for %q", prompt, items, body)
		}
	})
}
