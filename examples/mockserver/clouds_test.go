package mockserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sha is the hex SHA-256 of s.
func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func cloudPost(t *testing.T, url, body string, h http.Header) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestCloudAPIs: each hosted API answers in its cloud's wire format.
func TestCloudAPIs(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(Config{TTFT: time.Millisecond, ITL: time.Millisecond}))
	defer srv.Close()
	converse := `{"messages":[{"role":"user","content":[{"text":"hello there"}]}],"inferenceConfig":{"maxTokens":3}}`
	claude := `{"anthropic_version":"bedrock-2023-05-31","max_tokens":3,"messages":[{"role":"user","content":"hi"}]}`
	gemini := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":3}}`
	for _, tc := range []struct {
		path, body, ct string
		events         []string // event types of an event stream, in order
		has            string
	}{
		{"/model/m%3A1/converse-stream", converse, "application/vnd.amazon.eventstream",
			[]string{"messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}, ""},
		{"/model/m/converse", converse, "application/json", nil, `"stopReason":"max_tokens"`},
		{"/model/m/invoke-with-response-stream", claude, "application/vnd.amazon.eventstream", []string{"chunk", "chunk", "chunk", "chunk", "chunk", "chunk", "chunk", "chunk"}, ""},
		{"/model/m/invoke", claude, "application/json", nil, `"type":"message"`},
		{"/endpoints/ep/invocations-response-stream", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2,"stream":true}`, "application/vnd.amazon.eventstream", nil, ""},
		{"/endpoints/ep/invocations", `{"model":"m","prompt":"hi","max_tokens":2}`, "application/json", nil, `"text_completion"`},
		{"/v1beta/models/g:streamGenerateContent?alt=sse", gemini, "text/event-stream", nil, `"finishReason":"MAX_TOKENS"`},
		{"/v1/projects/p/locations/l/publishers/google/models/g:streamGenerateContent", gemini, "application/json", nil, `"finishReason": "MAX_TOKENS"`},
		{"/openai/deployments/d/chat/completions?api-version=2024-10-21", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":2}`, "application/json", nil, `"chat.completion"`},
	} {
		resp, b := cloudPost(t, srv.URL+tc.path, tc.body, nil)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ct) {
			t.Errorf("%s: %d %s: %s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
			continue
		}
		if tc.ct == "application/vnd.amazon.eventstream" {
			var types []string
			dec, r := eventstream.NewDecoder(), bytes.NewReader(b)
			for r.Len() > 0 {
				m, err := dec.Decode(r, nil)
				if err != nil {
					t.Fatalf("%s: %v", tc.path, err)
				}
				types = append(types, m.Headers.Get(":event-type").String())
			}
			if tc.events != nil && strings.Join(types, " ") != strings.Join(tc.events, " ") {
				t.Errorf("%s: events %v, want %v", tc.path, types, tc.events)
			}
			if tc.events == nil && (len(types) == 0 || types[0] != "PayloadPart") {
				t.Errorf("%s: events %v, want PayloadPart", tc.path, types)
			}
			continue
		}
		if !strings.Contains(string(b), tc.has) {
			t.Errorf("%s: %s lacks %s", tc.path, b, tc.has)
		}
	}
	if resp, b := cloudPost(t, srv.URL+"/openai/deployments/d/chat/completions", `{}`, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a deployment without api-version: %d %s, want Azure's 404", resp.StatusCode, b)
	}
	if resp, b := cloudPost(t, srv.URL+"/model/m/invoke", `{"model":"m","anthropic_version":"v","max_tokens":1,"messages":[{"role":"user","content":"x"}]}`, nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "extraneous key [model]") {
		t.Errorf("InvokeModel with a model key: %d %s", resp.StatusCode, b)
	}
}

// TestCloudCredentials: asked to, the mock checks a SigV4 signature, a
// key or a token of its own, and answers as the clouds do without one.
func TestCloudCredentials(t *testing.T) {
	t.Parallel()
	keys := &SigV4Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}
	srv := httptest.NewServer(New(Config{TTFT: time.Millisecond, SigV4: keys}))
	defer srv.Close()
	body := `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":2}}`
	sign := func(secret string) http.Header {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/model/m/converse", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = int64(len(body))
		c := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: secret}
		h := sha(body)
		if err := v4.NewSigner().SignHTTP(context.Background(), c, req, h, "bedrock", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		return req.Header
	}
	if resp, b := cloudPost(t, srv.URL+"/model/m/converse", body, sign("secret")); resp.StatusCode != http.StatusOK {
		t.Errorf("signed right: %d %s", resp.StatusCode, b)
	}
	resp, b := cloudPost(t, srv.URL+"/model/m/converse", body, sign("wrong"))
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-Errortype") != "InvalidSignatureException" {
		t.Errorf("another secret: %d %s", resp.StatusCode, b)
	}
	if resp, _ := cloudPost(t, srv.URL+"/model/m/converse", body, nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned: %d", resp.StatusCode)
	}

	tok := httptest.NewServer(New(Config{TTFT: time.Millisecond, RequireToken: true}))
	defer tok.Close()
	resp, b = cloudPost(t, tok.URL+"/token", "grant_type=refresh_token&refresh_token=x", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
	var got struct {
		AccessToken string `json:"access_token"`
	}
	if json.Unmarshal(b, &got) != nil || got.AccessToken == "" {
		t.Fatalf("token endpoint: %d %s", resp.StatusCode, b)
	}
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	if resp, b := cloudPost(t, tok.URL+"/v1/chat/completions", chat, http.Header{"Authorization": {"Bearer " + got.AccessToken}}); resp.StatusCode != http.StatusOK {
		t.Errorf("its token: %d %s", resp.StatusCode, b)
	}
	if resp, _ := cloudPost(t, tok.URL+"/v1/chat/completions", chat, http.Header{"Authorization": {"Bearer forged"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a forged token: %d", resp.StatusCode)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, tok.URL+"/computeMetadata/v1/instance/service-accounts/default/token", nil)
	req.Header.Set("Metadata-Flavor", "Google")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != http.StatusOK {
		t.Errorf("the metadata server's token: %v %v", r, err)
	} else {
		r.Body.Close()
	}
}
