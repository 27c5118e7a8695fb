package export

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/surgebench/surge/metrics"
)

// TestRawKeepsTheServersErrorLine: llama.cpp's `error: {...}` line comes
// back as the server sent it (a packet named error, as AIPerf's parser
// names a field), an event: error as event and data packets.
func TestRawKeepsTheServersErrorLine(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	j := NewRawJSONL(&b, time.Unix(0, 0))
	errLine := `{"code":500,"message":"context shift is disabled","type":"server_error"}`
	rec := &metrics.Record{RequestID: "r", SentNs: 1, EndNs: 9, Streamed: true,
		Err: &metrics.Error{Code: 500, Type: "server_error", Message: "context shift is disabled"},
		Raw: &metrics.RawExchange{Body: []byte(`{}`), Status: 200, ContentType: "text/event-stream", Stream: true, Events: []metrics.RawEvent{
			{AtNs: 2, Data: []byte(`{"choices":[{"delta":{"content":"a"}}]}`)},
			{AtNs: 3, Type: "error", Data: []byte(errLine), ErrorField: true},
			{AtNs: 4, Type: "error", Data: []byte(`{"type":"error"}`)},
		}}}
	v := metrics.Compute(rec, nil)
	j.WriteRecord(rec, &v, false)
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	var line struct {
		Responses []struct {
			Packets []ssePacket `json:"packets"`
		} `json:"responses"`
		Error *metrics.Error `json:"error"`
	}
	if err := json.Unmarshal(b.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	var got [][]ssePacket
	for _, r := range line.Responses {
		got = append(got, r.Packets)
	}
	want := [][]ssePacket{
		{{"data", `{"choices":[{"delta":{"content":"a"}}]}`}},
		{{"error", errLine}},
		{{"event", "error"}, {"data", `{"type":"error"}`}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("packets (-want +got):\n%s", d)
	}
	if line.Error == nil || line.Error.Code != 500 {
		t.Errorf("error %+v, want the record's", line.Error)
	}
}
