package h1_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/surgebench/surge/loadgen/h1"
)

// A client whose plain-http requests run on the caller's goroutine; https
// would go to the fallback.
func ExampleTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %s", b)
	}))
	defer srv.Close()

	tr := &h1.Transport{MaxIdlePerHost: 64, Fallback: http.DefaultTransport}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close() // read to its end and closed: the connection goes back to the pool
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
	// Output: 200 got hello
}
