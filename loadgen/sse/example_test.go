package sse_test

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/surgebench/surge/loadgen/sse"
)

func ExampleReader() {
	body := strings.NewReader(": keep-alive\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"event: error\ndata: {\"message\":\"overloaded\"}\n\n" +
		"data: [DONE]\n\n")
	start := time.Now()
	rd := sse.NewReader(body, func() int64 { return int64(time.Since(start)) })
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("stream error:", err)
			break
		}
		// ev.At is when the bytes arrived (or were read), before any JSON decoding.
		fmt.Printf("type=%q data=%s\n", ev.Type, ev.Data)
	}
	// Output:
	// type="" data={"choices":[{"delta":{"content":"Hi"}}]}
	// type="error" data={"message":"overloaded"}
	// type="" data=[DONE]
}
