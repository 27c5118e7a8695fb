package endpoint

import (
	"bytes"
	"strconv"

	"github.com/surgebench/surge/metrics"
)

// In-stream errors. A server that has sent 200 and its stream's headers can
// only report a failure inside the stream, and each engine does it its own
// way (shapes read from their sources; the tests cite the files):
//
//   - llama.cpp's server: an `error: {"code":500,"message":…,"type":…}`
//     field line, then `data: [DONE]` (builds before September 2025; the
//     sse Reader turns the line into an event of type "error"), and since
//     then `data: {"error": {…}}`;
//   - vLLM and SGLang: `data: {"error": {"message","type","code"}}`, older
//     vLLM `data: {"object":"error","message",…}`; a finish_reason of
//     "abort" (SGLang's request aborted without a status, vLLM's engine
//     abort) or "error" (vLLM's internal error);
//   - TGI: `data: {"error":{"message","http_status_code"}}` on its OpenAI
//     routes, `data: {"error":"…","error_type":"validation"}` on
//     /generate_stream (and its chat route before October 2024);
//   - Anthropic: `event: error` with `{"type":"error","error":{"type","message"}}`;
//   - the Responses API: `response.failed` and `error` events;
//   - Ollama's OpenAI route: the message is lost; the stream ends after an
//     empty chunk with no finish_reason and no [DONE], which the generator
//     reports as a stream error.

// SSE error types surge names itself.
const (
	// ErrStreamResponse is an error the server sent inside a stream
	// without a type of its own: AIPerf's name for it.
	ErrStreamResponse = "SSEResponseError"
	// ErrFinishAbort and ErrFinishError are answers that ended with a
	// finish_reason of "abort" or "error": the server gave up on them.
	ErrFinishAbort = "finish_reason_abort"
	ErrFinishError = "finish_reason_error"
)

var (
	abortReason = []byte("abort")
	errorReason = []byte("error")
)

// finishReason reads a finish or stop reason at the cursor: it finished
// the answer (reason: its raw string, nil for another JSON value) when it
// is neither null, nor empty, nor the string "null". koboldcpp sends
// "null" and distributed-llama "" on every chunk before the last: taking
// them for a finish would pass a stream cut cleanly between two events as
// a complete, shorter answer.
func finishReason(s *scanner) (finished bool, reason []byte, err error) {
	switch s.peek() {
	case 'n':
		return false, nil, s.literal("null")
	case '"':
		v, err := s.rawKey()
		return len(v) > 0 && string(v) != "null", v, err
	}
	return true, nil, s.skip()
}

// finishError is the error of a finish_reason that says the answer failed
// (nil for the others).
func finishError(reason []byte) *metrics.Error {
	switch {
	case bytes.Equal(reason, abortReason):
		return &metrics.Error{Type: ErrFinishAbort, Message: `the server aborted the answer (finish_reason "abort")`}
	case bytes.Equal(reason, errorReason):
		return &metrics.Error{Type: ErrFinishError, Message: `the server failed during generation (finish_reason "error")`}
	}
	return nil
}

// isErrorEvent reports an SSE event of type "error" (Anthropic's, the
// Responses API's, llama.cpp's error field).
func isErrorEvent(typ []byte) bool { return bytes.Equal(typ, errorReason) }

// StreamError reads the data of an error event in any of the shapes above:
// an "error" member (an object or a string, with TGI's error_type beside
// it), or the error's own members at the top (llama.cpp's field, old vLLM,
// the Responses API's error event). Data that is not JSON is the message
// itself. The type is the server's (a string code when it gave no type),
// else ErrStreamResponse; the code is the server's (0: none).
func StreamError(data []byte) *metrics.Error {
	var (
		top, inner     *metrics.Error
		topType, tgiTy []byte
		own            metrics.Error
	)
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "error":
			e, err := parseErrorValue(&s)
			inner = e
			return err
		case "type":
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.str(nil)
			topType = v
			return err
		case "error_type":
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.str(nil)
			tgiTy = v
			return err
		case "message", "code", "http_status_code":
			return errorField(&s, &own, key)
		default:
			return s.skip()
		}
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		msg := string(bytes.TrimSpace(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		if msg == "" {
			msg = "an error event without data"
		}
		return &metrics.Error{Type: ErrStreamResponse, Message: msg}
	}
	top = &own
	if len(topType) > 0 && string(topType) != "error" && own.Type == "" {
		own.Type = string(topType)
	}
	e := top
	if inner != nil {
		e = inner
		if e.Code == 0 {
			e.Code = own.Code
		}
		if e.Message == "" {
			e.Message = own.Message
		}
		if e.Type == "" || e.Type == "error" {
			e.Type = own.Type
		}
	}
	if len(tgiTy) > 0 && (e.Type == "" || e.Type == "error") {
		e.Type = string(tgiTy)
	}
	if e.Type == "" || e.Type == "error" {
		e.Type = ErrStreamResponse
	}
	if e.Message == "" {
		e.Message = "error event: " + excerpt(data)
	}
	return e
}

// codeType is a string error code that is not a number (the Responses
// API's "server_error", OpenAI's "context_length_exceeded"): it names the
// error when the server gave no type.
func codeType(e *metrics.Error, v []byte) {
	if n, err := strconv.Atoi(string(v)); err == nil {
		e.Code = n
		return
	}
	if e.Type == "" && len(v) > 0 {
		e.Type = string(v)
	}
}
