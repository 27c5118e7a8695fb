package mockserver_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"time"

	"github.com/surgebench/surge/examples/mockserver"
)

// Start a mock on a free loopback port, stream one answer, and read the
// mock's own view of it.
func ExampleStart() {
	ctx := context.Background()
	mock, err := mockserver.Start(ctx, "127.0.0.1:0", mockserver.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer mock.Close(ctx)

	resp, err := http.Post(mock.URL()+"/v1/chat/completions", "application/json", strings.NewReader(
		`{"model":"mock","messages":[{"role":"user","content":"hello"}],"stream":true,"max_tokens":8}`))
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	st := mock.Server().Stats()
	fmt.Println(resp.Status, st.Completed, st.GeneratedTokens, st.TTFTP50MS >= 5)
	// Output: 200 OK 1 8 true
}

// A Server is an http.Handler, so it mounts anywhere, here under a mux.
func ExampleNew() {
	mux := http.NewServeMux()
	mux.Handle("/", mockserver.New(mockserver.Config{Model: "llama-mock", DefaultOutputTokens: 64}))
	_ = mux
	fmt.Println(mockserver.New(mockserver.Config{}).Config().Model)
	// Output: mock
}
