package frames

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// headerBytes is a string or bytes header's value as the SDK decoded it
// (nil for any other type, or none).
func headerBytes(hs eventstream.Headers, name string) []byte {
	switch v := hs.Get(name).(type) {
	case eventstream.StringValue:
		return []byte(v)
	case eventstream.BytesValue:
		return []byte(v)
	}
	return nil
}

// FuzzEventStream checks the reader against the AWS SDK's own decoder:
// on a stream the SDK decodes whole, the reader returns the same
// messages (types and payloads) and ends cleanly, and Payload the same
// bytes; on any input it ends, without panicking.
func FuzzEventStream(f *testing.F) {
	f.Add(encode(f, converse...))
	f.Add(encode(f, event{eventType: "chunk", payload: `{"bytes":"eyJ0eXBlIjoibWVzc2FnZV9zdG9wIn0="}`}))
	f.Add(encode(f, event{msgType: "exception", exceptionType: "ModelStreamError", payload: `{"Message":"m"}`}))
	f.Add(encode(f, event{eventType: "PayloadPart", payload: "data: {}\n\n"})[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithSDK(t, data)
		if len(data) > 0 {
			// The same bytes as one message's headers and payload, its
			// lengths and checksums right: the headers' parsing checked.
			k := int(data[0]) % len(data)
			compareWithSDK(t, frame(data[1:1+k], data[1+k:]))
		}
	})
}

// frame is headers and payload as one message, lengths and CRCs right.
func frame(headers, payload []byte) []byte {
	total := preludeLen + len(headers) + len(payload) + crcLen
	b := make([]byte, 0, total)
	b = binary.BigEndian.AppendUint32(b, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(append(b, headers...), payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func compareWithSDK(t *testing.T, data []byte) {
	{
		var want []eventstream.Message
		dec := eventstream.NewDecoder()
		r := bytes.NewReader(data)
		sdkOK := true
		for r.Len() > 0 {
			m, err := dec.Decode(r, nil)
			if err != nil {
				sdkOK = false
				break
			}
			want = append(want, m.Clone())
		}
		es := NewEventStream(bytes.NewReader(data), nil, 1<<20)
		var got []Message
		var err error
		for {
			var m Message
			if m, err = es.NextMessage(); err != nil {
				break
			}
			m.MessageType, m.EventType, m.ExceptionType = bytes.Clone(m.MessageType), bytes.Clone(m.EventType), bytes.Clone(m.ExceptionType)
			m.Payload = bytes.Clone(m.Payload)
			got = append(got, m)
			if len(got) > len(data) {
				t.Fatal("more messages than bytes")
			}
		}
		if !sdkOK {
			if len(got) > len(want)+1 {
				t.Fatalf("%d messages read where the SDK decoded %d before failing", len(got), len(want))
			}
			return
		}
		if !errors.Is(err, io.EOF) || len(got) != len(want) {
			t.Fatalf("read %d messages ending with %v; the SDK decoded %d", len(got), err, len(want))
		}
		var payloads, wantPayloads []byte
		events := true
		for i, w := range want {
			g := got[i]
			for _, h := range []struct {
				name string
				got  []byte
			}{{":message-type", g.MessageType}, {":event-type", g.EventType}, {":exception-type", g.ExceptionType}} {
				if !bytes.Equal(h.got, headerBytes(w.Headers, h.name)) {
					t.Fatalf("message %d: %s %q, the SDK's %q", i, h.name, h.got, headerBytes(w.Headers, h.name))
				}
			}
			if !bytes.Equal(g.Payload, w.Payload) {
				t.Fatalf("message %d: payload %q, the SDK's %q", i, g.Payload, w.Payload)
			}
			if mt := string(g.MessageType); mt == "exception" || mt == "error" {
				events = false
			}
			if events {
				wantPayloads = append(wantPayloads, w.Payload...)
			}
		}
		p := NewPayload(bytes.NewReader(data), 1<<20)
		payloads, err = io.ReadAll(p)
		var se *StreamError
		if err != nil && !(errors.As(err, &se) && !events) {
			t.Fatalf("payloads ended with %v", err)
		}
		if !bytes.Equal(payloads, wantPayloads) {
			t.Fatalf("payloads %q, want %q", payloads, wantPayloads)
		}
	}
}

// FuzzJSONArray: the reader ends on any input; a JSON array of objects
// and arrays is read as encoding/json reads it, element by element; and
// each element it returns is bracketed as JSON is.
func FuzzJSONArray(f *testing.F) {
	for _, s := range []string{
		`[{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}` + "\n,\r\n" + `{"usageMetadata":{"promptTokenCount":1}}]`,
		`[]`, `[{"a":"]}\""}]`, `[[1,{"b":[]}],{}]`, `[{"a":1}`, ` [ {"x": "\\"} ] `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAll(NewJSONArray(bytes.NewReader(data), nil, 1<<20))
		for _, ev := range got {
			if d := ev.Data; len(d) < 2 || !(d[0] == '{' && d[len(d)-1] == '}' || d[0] == '[' && d[len(d)-1] == ']') {
				t.Fatalf("element %q is not bracketed", d)
			}
		}
		var raw []json.RawMessage
		if json.Unmarshal(data, &raw) != nil {
			return
		}
		for _, r := range raw {
			if c := bytes.TrimSpace(r); len(c) == 0 || c[0] != '{' && c[0] != '[' {
				return // scalars are no stream's chunks
			}
		}
		if !errors.Is(err, io.EOF) || len(got) != len(raw) {
			t.Fatalf("%d elements ending with %v; encoding/json reads %d", len(got), err, len(raw))
		}
		for i := range raw {
			if !bytes.Equal(bytes.TrimSpace(raw[i]), got[i].Data) {
				t.Fatalf("element %d: %q, encoding/json's %q", i, got[i].Data, raw[i])
			}
		}
	})
}
