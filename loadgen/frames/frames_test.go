package frames

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/sse"
)

// event is an event stream message as the SDK's encoder is given it.
type event struct {
	msgType, eventType, exceptionType string
	payload                           string
}

// encode writes events with the AWS SDK's encoder: what Bedrock and
// SageMaker send.
func encode(t testing.TB, events ...event) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, e := range events {
		msgType := e.msgType
		if msgType == "" {
			msgType = "event"
		}
		h := eventstream.Headers{{Name: ":message-type", Value: eventstream.StringValue(msgType)}}
		if e.eventType != "" {
			h = append(h, eventstream.Header{Name: ":event-type", Value: eventstream.StringValue(e.eventType)})
		}
		if e.exceptionType != "" {
			h = append(h, eventstream.Header{Name: ":exception-type", Value: eventstream.StringValue(e.exceptionType)})
		}
		// Headers of every other value type, which the reader skips.
		h = append(h,
			eventstream.Header{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			eventstream.Header{Name: "flag", Value: eventstream.BoolValue(true)},
			eventstream.Header{Name: "n8", Value: eventstream.Int8Value(-3)},
			eventstream.Header{Name: "n16", Value: eventstream.Int16Value(300)},
			eventstream.Header{Name: "n64", Value: eventstream.Int64Value(1 << 40)},
			eventstream.Header{Name: "raw", Value: eventstream.BytesValue([]byte{0, 1, 2})},
		)
		if err := enc.Encode(&b, eventstream.Message{Headers: h, Payload: []byte(e.payload)}); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// readAll reads every event of rd, with its type and data copied.
func readAll(rd Reader) (got []sse.Event, err error) {
	for {
		ev, err := rd.Next()
		if err != nil {
			return got, err
		}
		ev.Type, ev.Data = bytes.Clone(ev.Type), bytes.Clone(ev.Data)
		got = append(got, ev)
	}
}

func texts(evs []sse.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type)+" "+string(e.Data))
	}
	return out
}

// ConverseStream's events as AWS's API reference shows them.
var converse = []event{
	{eventType: "messageStart", payload: `{"p":"abcdefgh","role":"assistant"}`},
	{eventType: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":"Hello"},"p":"abcd"}`},
	{eventType: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"text":" world"},"p":"abcdefghij"}`},
	{eventType: "contentBlockStop", payload: `{"contentBlockIndex":0,"p":"ab"}`},
	{eventType: "messageStop", payload: `{"p":"abcdef","stopReason":"end_turn"}`},
	{eventType: "metadata", payload: `{"metrics":{"latencyMs":312},"p":"abc","usage":{"inputTokens":12,"outputTokens":2,"totalTokens":14}}`},
}

func TestEventStreamReadsMessages(t *testing.T) {
	t.Parallel()
	data := encode(t, converse...)
	want := []string{}
	for _, e := range converse {
		want = append(want, e.eventType+" "+e.payload)
	}
	for name, src := range map[string]func() io.Reader{
		"whole":       func() io.Reader { return bytes.NewReader(data) },
		"byte a read": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		"half a read": func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
	} {
		got, err := readAll(NewEventStream(src(), nil, 0))
		if !errors.Is(err, io.EOF) {
			t.Errorf("%s: ended with %v, want io.EOF", name, err)
		}
		if diff := cmp.Diff(want, texts(got)); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", name, diff)
		}
	}
}

func TestEventStreamExceptionIsAnErrorEvent(t *testing.T) {
	t.Parallel()
	data := encode(t, converse[1], event{msgType: "exception", exceptionType: "throttlingException", payload: `{"message":"Too many requests, please wait before trying again."}`})
	got, err := readAll(NewEventStream(bytes.NewReader(data), nil, 0))
	if !errors.Is(err, io.EOF) || len(got) != 2 {
		t.Fatalf("%d events, %v", len(got), err)
	}
	if string(got[1].Type) != "error" {
		t.Fatalf("exception's type %q, want error", got[1].Type)
	}
	e := endpoint.StreamError(got[1].Data)
	if e.Type != "throttlingException" || e.Message != "Too many requests, please wait before trying again." {
		t.Errorf("exception read as %+v", e)
	}
	// An error message (its code and message in headers).
	var b bytes.Buffer
	msg := eventstream.Message{Headers: eventstream.Headers{
		{Name: ":message-type", Value: eventstream.StringValue("error")},
		{Name: ":error-code", Value: eventstream.StringValue("InternalFailure")},
		{Name: ":error-message", Value: eventstream.StringValue("an internal \"failure\"")},
	}}
	if err := eventstream.NewEncoder().Encode(&b, msg); err != nil {
		t.Fatal(err)
	}
	ev, err := NewEventStream(&b, nil, 0).Next()
	if err != nil {
		t.Fatal(err)
	}
	if e := endpoint.StreamError(ev.Data); e.Type != "InternalFailure" || e.Message != `an internal "failure"` {
		t.Errorf("error message read as %+v from %s", e, ev.Data)
	}
}

func TestEventStreamRefusesDamage(t *testing.T) {
	t.Parallel()
	data := encode(t, converse[:2]...)
	for _, tc := range []struct {
		name string
		data []byte
		want error
	}{
		{"cut in the prelude", data[:6], io.ErrUnexpectedEOF},
		{"cut in a message", data[:len(data)-3], io.ErrUnexpectedEOF},
		{"a payload byte changed", flip(data, 40), ErrChecksum},
		{"a prelude byte changed", flip(data, 5), ErrChecksum},
		{"a message over the bound", data, ErrTooLarge},
	} {
		max := 0
		if tc.want == ErrTooLarge {
			max = 40
		}
		_, err := readAll(NewEventStream(bytes.NewReader(tc.data), nil, max))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A message whose lengths lie, its prelude's CRC right.
	var p [12]byte
	binary.BigEndian.PutUint32(p[0:], 20)
	binary.BigEndian.PutUint32(p[4:], 10)
	binary.BigEndian.PutUint32(p[8:], crc32.ChecksumIEEE(p[:8]))
	if _, err := NewEventStream(bytes.NewReader(p[:]), nil, 0).Next(); err == nil || !strings.Contains(err.Error(), "20 bytes with 10 bytes of headers") {
		t.Errorf("lying lengths: %v", err)
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x40
	return c
}

// stampedSource is a source whose every Read has its own arrival stamp.
type stampedSource struct {
	parts [][]byte
	at    int64
}

func (s *stampedSource) Read(p []byte) (int, error) {
	if len(s.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.parts[0])
	s.parts = s.parts[1:]
	s.at += 100
	return n, nil
}

func (s *stampedSource) ArrivedAt() int64 { return s.at }

// TestStampsAreTheReadThatCompletedTheMessage: a message that arrives in
// two reads carries the second's stamps; messages one read completed
// share them; one clock reading per read.
func TestStampsAreTheReadThatCompletedTheMessage(t *testing.T) {
	t.Parallel()
	one, two, three := encode(t, converse[1]), encode(t, converse[2]), encode(t, converse[3])
	src := &stampedSource{parts: [][]byte{one[:10], append(one[10:], two...), three}}
	var clock int64
	now := func() int64 { clock += 1000; return clock }
	got, err := readAll(NewEventStream(src, now, 0))
	if !errors.Is(err, io.EOF) || len(got) != 3 {
		t.Fatalf("%d events, %v", len(got), err)
	}
	want := [][2]int64{{200, 2000}, {200, 2000}, {300, 3000}}
	for i, ev := range got {
		if ev.At != want[i][0] || ev.ReadAt != want[i][1] {
			t.Errorf("event %d: At %d ReadAt %d, want %v", i, ev.At, ev.ReadAt, want[i])
		}
	}
	if clock != 3000 {
		t.Errorf("%d clock readings for 3 reads", clock/1000)
	}
}

// TestPayloadCarriesAnInnerStream: SageMaker's PayloadPart events carry
// the container's server-sent events cut anywhere; an SSE reader over the
// payloads reads them, stamped by the message that completed each.
func TestPayloadCarriesAnInnerStream(t *testing.T) {
	t.Parallel()
	inner := "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\n\n" + "data: [DONE]\n\n"
	var parts []event
	for _, cut := range [][2]int{{0, 7}, {7, 40}, {40, 60}, {60, len(inner)}} {
		parts = append(parts, event{eventType: "PayloadPart", payload: inner[cut[0]:cut[1]]})
	}
	var src stampedSource
	for _, p := range parts {
		src.parts = append(src.parts, encode(t, p))
	}
	rd := sse.NewReader(NewPayload(&src, 0), func() int64 { return 1 << 20 })
	got, err := readAll(rd)
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{` {"choices":[{"delta":{"content":"Hi"}}]}`, ` {"choices":[{"delta":{"content":" there"}}]}`, " [DONE]"}, texts(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	for i, want := range []int64{300, 400, 400} {
		if got[i].At != want {
			t.Errorf("event %d stamped %d, want the message's %d", i, got[i].At, want)
		}
	}
	// A ModelStreamError ends it with the error.
	data := append(encode(t, parts[0]), encode(t, event{msgType: "exception", exceptionType: "ModelStreamError", payload: `{"Message":"the container failed","ErrorCode":"500"}`})...)
	_, err = readAll(sse.NewReader(NewPayload(bytes.NewReader(data), 0), nil))
	var se *StreamError
	if !errors.As(err, &se) || !strings.Contains(string(se.Data), "ModelStreamError") {
		t.Errorf("exception: %v", err)
	}
}

func TestJSONArrayReadsElementsAsTheyArrive(t *testing.T) {
	t.Parallel()
	stream := "[{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hel\"}]}}]}\n" +
		",\r\n{\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"lo ]} \\\" [{\"}]}}]}\n" +
		",\r\n{\"candidates\": [{\"finishReason\": \"STOP\"}], \"usageMetadata\": {\"promptTokenCount\": 3}}\n]"
	var want []string
	if err := json.Unmarshal([]byte(stream), new([]json.RawMessage)); err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	_ = json.Unmarshal([]byte(stream), &raw)
	for _, r := range raw {
		want = append(want, " "+string(r))
	}
	for name, src := range map[string]func() io.Reader{
		"whole":       func() io.Reader { return strings.NewReader(stream) },
		"byte a read": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
	} {
		got, err := readAll(NewJSONArray(src(), nil, 0))
		if !errors.Is(err, io.EOF) {
			t.Errorf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, texts(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if got, err := readAll(NewJSONArray(strings.NewReader(` {"a":[1]} `), nil, 0)); !errors.Is(err, io.EOF) || len(got) != 1 || string(got[0].Data) != `{"a":[1]}` {
		t.Errorf("one object: %q, %v", texts(got), err)
	}
	for _, bad := range []string{"", "[", `[{"a":1}`, `{"a":1}{"b":2}`, `[1]`, `[{"a":1} {"b":2}]`} {
		if _, err := readAll(NewJSONArray(strings.NewReader(bad), nil, 0)); errors.Is(err, io.EOF) {
			t.Errorf("%q read as a whole array", bad)
		}
	}
	if _, err := readAll(NewJSONArray(strings.NewReader(`[{"a":"`+strings.Repeat("x", 100)+`"}]`), nil, 50)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an element over the bound: %v", err)
	}
	if got, err := readAll(NewJSONArray(strings.NewReader(" [ ] "), nil, 0)); !errors.Is(err, io.EOF) || len(got) != 0 {
		t.Errorf("an empty array: %d events, %v", len(got), err)
	}
}

func TestOfPicksTheFraming(t *testing.T) {
	t.Parallel()
	chat := &endpoint.Endpoint{Kind: endpoint.Chat}
	bedrock := &endpoint.Endpoint{Kind: endpoint.BedrockConverse}
	gemini := &endpoint.Endpoint{Kind: endpoint.Gemini}
	ollama := &endpoint.Endpoint{Kind: endpoint.OllamaChat}
	for _, tc := range []struct {
		ct   string
		ep   *endpoint.Endpoint
		want Framing
	}{
		{"text/event-stream", chat, SSE},
		{"Text/Event-Stream; charset=utf-8", gemini, SSE},
		{"application/vnd.amazon.eventstream", bedrock, AWSEvents},
		{"application/vnd.amazon.eventstream", chat, AWSPayload},
		{"application/json; charset=UTF-8", gemini, JSONArrayFraming},
		{"application/json", chat, Whole},
		{"text/html", gemini, Whole},
		{"application/x-ndjson", ollama, NDJSON},
		{"Application/NDJSON; charset=utf-8", ollama, NDJSON},
		{"application/x-ndjson", chat, Whole},
		{"application/json", ollama, Whole},
	} {
		if got := Of(tc.ct, tc.ep); got != tc.want {
			t.Errorf("Of(%q, %s) = %d, want %d", tc.ct, tc.ep.Kind, got, tc.want)
		}
	}
}

// TestReadersSwitchBetweenLinesAndEvents: the pooled readers read an
// Ollama line stream, then server-sent events, each as its own framing.
func TestReadersSwitchBetweenLinesAndEvents(t *testing.T) {
	t.Parallel()
	rs := NewReaders(nil, 0)
	ollama := &endpoint.Endpoint{Kind: endpoint.OllamaChat}
	chat := &endpoint.Endpoint{Kind: endpoint.Chat}
	for _, tc := range []struct {
		ct, body string
		ep       *endpoint.Endpoint
		want     []string
	}{
		{"application/x-ndjson", "{\"a\":1}\n{\"done\":true}\n", ollama, []string{`{"a":1}`, `{"done":true}`}},
		{"text/event-stream", "data: {\"b\":2}\n\ndata: [DONE]\n\n", chat, []string{`{"b":2}`, "[DONE]"}},
		{"application/x-ndjson", "{\"c\":3}\n", ollama, []string{`{"c":3}`}},
	} {
		rd, ok := rs.Open(tc.ct, tc.ep, strings.NewReader(tc.body))
		if !ok {
			t.Fatalf("%s: no stream", tc.ct)
		}
		var got []string
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			got = append(got, string(ev.Data))
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: read %q, want %q", tc.ct, got, tc.want)
		}
	}
}
