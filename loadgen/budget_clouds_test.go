package loadgen

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/auth"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/frames"
)

// The hosted endpoints' budget cases (docs/clouds.md): a request signed
// with SigV4 (the body hashed, the headers signed, once a request), and
// Bedrock's ConverseStream, an AWS event stream read without allocating
// per token.
func init() {
	budgetCases = append(budgetCases,
		budgetCase{name: "chat, SigV4 signed", kind: endpoint.Chat, maxTokens: budgetTokens, gen: []Option{WithAuth(budgetSigner())},
			budget: chatBudget.with(func(b *budget) {
				// The signature, once a request: the body's hash in hex,
				// the canonical request, the string to sign and the
				// headers it sets (the AWS SDK signer's own work; its
				// signing key is cached by day, region and service),
				// the traceparent among the headers it signs and sets
				// again (issue 54).
				b.allocsPerRequest += 52
				b.bytesPerRequest += 4<<10 + 512
			})},
		budgetCase{name: "bedrock converse stream", kind: endpoint.BedrockConverse, maxTokens: budgetTokens, budget: chatBudget},
	)
}

// budgetSigner signs with fixed keys: nothing of the machine's is read.
func budgetSigner() *auth.SigV4 {
	s, err := auth.NewSigV4(context.Background(), auth.SigV4Options{Region: "us-east-1", Service: "execute-api",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "")})
	if err != nil {
		panic(err)
	}
	return s
}

// mockStream is the mock's stream of n tokens for ep, cut into its
// events (SSE) or messages (an AWS event stream), and its content type.
func mockStream(t *testing.T, cfg mockserver.Config, ep *endpoint.Endpoint, n int) ([][]byte, string) {
	t.Helper()
	if !ep.EventStreamMessages() {
		return mockEventsWith(t, cfg, ep, n), frames.SSEType
	}
	ts := httptest.NewServer(mockserver.New(cfg))
	defer ts.Close()
	body, err := ep.Body("", nil, &datasets.Turn{Text: "a prompt", MaxTokens: n})
	if err != nil {
		t.Fatal(err)
	}
	u, err := RequestURL(ts.URL, ep.Path())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %d, %v: %s", ep.Kind, resp.StatusCode, err, all)
	}
	var msgs [][]byte
	for len(all) >= 4 {
		m := int(binary.BigEndian.Uint32(all))
		if m > len(all) {
			t.Fatalf("%s: the stream ends inside a message", ep.Kind)
		}
		msgs = append(msgs, all[:m])
		all = all[m:]
	}
	return msgs, resp.Header.Get("Content-Type")
}
