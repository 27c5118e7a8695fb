package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Stream error shapes: how Config.StreamErrorRate fails a streamed
// answer, as each engine does after it has sent 200 and its headers (see
// loadgen/endpoint/streamerror.go for the sources).
const (
	// ShapeVLLM: data: {"error": {"message","type","param","code"}}, then
	// data: [DONE] (vLLM; llama.cpp since September 2025).
	ShapeVLLM = "vllm"
	// ShapeLlamaCpp: an `error: {"code","message","type"}` field line,
	// then data: [DONE] (llama.cpp's server before September 2025).
	ShapeLlamaCpp = "llamacpp"
	// ShapeSGLang: data: {"error": {"object":"error",…,"type":"SERVICE_UNAVAILABLE","code":503}}, then [DONE].
	ShapeSGLang = "sglang"
	// ShapeTGI: data: {"error": {"message","http_status_code":422}}, and
	// the stream ends.
	ShapeTGI = "tgi"
	// ShapeAbort: a finish_reason of "abort" (SGLang's abort without a
	// status), then [DONE].
	ShapeAbort = "abort"
	// ShapeOllama: an empty chunk and the stream's end, no finish_reason
	// and no [DONE] (Ollama's OpenAI route, whose error text is lost).
	ShapeOllama = "ollama"
	// ShapeEmpty: a clean end with no text at all (finish_reason "stop",
	// usage, [DONE]): a 200 with no tokens.
	ShapeEmpty = "empty"
)

// StreamErrorShapes lists the shapes Config.StreamErrorShape accepts.
var StreamErrorShapes = []string{ShapeVLLM, ShapeLlamaCpp, ShapeSGLang, ShapeTGI, ShapeAbort, ShapeOllama, ShapeEmpty}

// errStreamFailed is stream's report of a stream it failed on purpose:
// neither completed nor aborted by the client.
var errStreamFailed = errors.New("mock: stream failed on purpose")

// streamFailure is the message of a StreamErrorRate failure.
const streamFailure = "mock: injected stream failure"

// streamSalt keeps the choice of stream failures apart from ErrorRate's.
const streamSalt = 0x5eed57e4

// failsInStream decides, from the seed and the request number alone,
// whether streamed request n fails inside its stream.
func (s *Server) failsInStream(n uint64) bool {
	if s.cfg.StreamErrorRate <= 0 {
		return false
	}
	return unitFloat(splitmix64(s.cfg.Seed^splitmix64(n^streamSalt))) < s.cfg.StreamErrorRate
}

// appendStreamError appends g's failure in shape, after head (the
// `data: {"id":…,"choices":[` its chunks share). It reports whether the
// stream then ends without a [DONE] of its own.
func appendStreamError(b, head []byte, g *generation, shape string) ([]byte, bool) {
	switch shape {
	case ShapeLlamaCpp:
		b = append(b, `error: {"code":500,"message":"`+streamFailure+`","type":"server_error"}`+"\n\n"...)
	case ShapeSGLang:
		b = append(b, `data: {"error": {"object": "error", "message": "`+streamFailure+`", "type": "SERVICE_UNAVAILABLE", "param": null, "code": 503}}`+"\n\n"...)
	case ShapeTGI:
		return append(b, `data: {"error":{"message":"`+streamFailure+`","http_status_code":422}}`+"\n\n"...), true
	case ShapeAbort, ShapeEmpty:
		b = append(b, head...)
		b = append(b, choiceOpen...)
		if g.kind == chatAPI {
			b = append(b, `"delta":{"content":""}`...)
		} else {
			b = append(b, `"text":""`...)
		}
		reason := "abort"
		if shape == ShapeEmpty {
			reason = "stop"
		}
		b = append(b, `,"logprobs":null,"finish_reason":"`+reason+`"}]}`+"\n\n"...)
	case ShapeOllama:
		b = append(b, head...)
		b = append(b, choiceOpen...)
		return append(b, `"delta":{"content":""},"finish_reason":null}]}`+"\n\n"...), true
	default: // ShapeVLLM
		b = append(b, `data: {"error": {"message": "`+streamFailure+`", "type": "InternalServerError", "param": null, "code": 500}}`+"\n\n"...)
	}
	return b, false
}

// validShape reports whether shape is one of StreamErrorShapes ("" is
// ShapeVLLM).
func validShape(shape string) error {
	if shape == "" || slices.Contains(StreamErrorShapes, shape) {
		return nil
	}
	return fmt.Errorf("mockserver: Config.StreamErrorShape %q is not one of %s", shape, strings.Join(StreamErrorShapes, ", "))
}

// failStream ends g's stream with its failure after the tokens sent so
// far, and counts it.
func (s *Server) failStream(w http.ResponseWriter, head []byte, g *generation, ev []byte) ([]byte, error) {
	ev, noDone := appendStreamError(ev[:0], head, g, s.cfg.StreamErrorShape)
	if !noDone {
		ev = append(ev, doneEvent...)
	}
	s.streamErrors.Add(1)
	if _, err := w.Write(ev); err != nil {
		return ev, fmt.Errorf("mock: writing the stream's failure: %w", err)
	}
	w.(http.Flusher).Flush()
	return ev, nil
}
