package auth

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
)

// BenchmarkSigV4Authorize is the per-request cost of a signature: a chat
// request of about 2 KiB (a 550-token prompt) hashed, its headers and
// URL signed. It runs once a request, never per token.
func BenchmarkSigV4Authorize(b *testing.B) {
	s, err := NewSigV4(context.Background(), SigV4Options{Region: "us-east-1", Service: "bedrock",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "session-token")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"` + strings.Repeat("lorem ipsum ", 180) + `"}]}],"inferenceConfig":{"maxTokens":128}}`)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
		"https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream", bytes.NewReader(body))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}, "X-Request-Id": {"0123456789abcdef0123456789abcdef"}}
		if err := s.Authorize(req, body); err != nil {
			b.Fatal(err)
		}
	}
}
