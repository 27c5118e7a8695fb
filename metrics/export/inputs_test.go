package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/surgebench/surge/metrics/export/shape"
	"sync"
	"testing"
	"time"
)

// inputsFileShape is AIPerf's InputsFile (common/models/dataset_models.py):
// data: list[SessionPayloads{session_id: str, payloads: list[dict]}]; its
// inputs_json loader reads exactly these keys.
var inputsFileShape = shape.Model{Fields: map[string]shape.Shape{
	"data": shape.List(shape.Model{Fields: map[string]shape.Shape{
		"session_id": shape.String,
		"payloads":   shape.List(shape.Object),
	}}),
}}

// TestGoldenInputs: sessions interleave on the wire, but each becomes one
// entry with its turns' bodies in order; a conversation sent twice is two
// entries with distinct ids.
func TestGoldenInputs(t *testing.T) {
	var b bytes.Buffer
	in := NewInputs(&b)
	body := func(conv string, turn int) []byte {
		return fmt.Appendf(nil, `{"model":"m","messages":[{"role":"user","content":"%s turn %d"}],"stream":true}`, conv, turn)
	}
	in.Body(0, "conv-a", 0, body("conv-a", 0))
	in.Body(1, "conv-b", 0, body("conv-b", 0))
	in.Body(0, "conv-a", 1, body("conv-a", 1))
	in.EndSession(0)
	in.Body(2, "conv-a", 0, body("conv-a", 0))
	in.EndSession(1)
	in.Body(3, "conv-c", 0, body("conv-c", 0)) // never ended: still written
	in.EndSession(2)
	in.EndSession(4) // a session that sent nothing: no entry
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	golden(t, "inputs.json", b.Bytes())
	checkShape(t, "inputs.json", b.Bytes(), inputsFileShape)
	var doc struct {
		Data []struct {
			SessionID string            `json:"session_id"`
			Payloads  []json.RawMessage `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range doc.Data {
		got = append(got, fmt.Sprintf("%s:%d", d.SessionID, len(d.Payloads)))
	}
	if want := "[conv-a:2 conv-b:1 conv-a#2:1 conv-c:1]"; fmt.Sprint(got) != want {
		t.Errorf("entries %v, want %s", got, want)
	}
}

// TestInputsConcurrent: many sessions at once (several batches and a
// part of one), each from its own goroutine, all arrive whole.
func TestInputsConcurrent(t *testing.T) {
	const sessions = 5*inputsBatch/2 + 3
	var b bytes.Buffer
	in := NewInputs(&b)
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			for turn := range 3 {
				in.Body(int64(s), fmt.Sprintf("c%d", s%8), turn, fmt.Appendf(nil, `{"t":%d}`, turn))
			}
			in.EndSession(int64(s))
		})
	}
	wg.Wait()
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	checkShape(t, "inputs.json", b.Bytes(), inputsFileShape)
	var doc struct {
		Data []struct {
			SessionID string           `json:"session_id"`
			Payloads  []map[string]int `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, d := range doc.Data {
		if ids[d.SessionID] {
			t.Errorf("session_id %s twice", d.SessionID)
		}
		ids[d.SessionID] = true
		for i, p := range d.Payloads {
			if p["t"] != i {
				t.Errorf("%s payloads[%d] is turn %d", d.SessionID, i, p["t"])
			}
		}
	}
	if len(doc.Data) != sessions {
		t.Errorf("%d entries, want %d", len(doc.Data), sessions)
	}
}

// stallWriter blocks every Write until released.
type stallWriter struct {
	bytes.Buffer
	release chan struct{}
}

func (w *stallWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.Buffer.Write(p)
}

// TestInputsWaitsForASlowWriter: past the bound on held bodies, EndSession
// waits for the writer instead of holding more (or dropping any), and
// every session is still written.
func TestInputsWaitsForASlowWriter(t *testing.T) {
	w := &stallWriter{release: make(chan struct{})}
	in := NewInputs(w)
	in.maxHeld = 3 << 20
	body := fmt.Appendf(nil, `{"p":"%s"}`, bytes.Repeat([]byte("x"), 1<<20))
	ended := make(chan int, 16)
	go func() {
		for s := range 8 {
			in.Body(int64(s), "c", 0, body)
			in.EndSession(int64(s))
			ended <- s
		}
		close(ended)
	}()
	// The writer takes what has ended (at most the bound's three) and
	// stalls writing its first; two more fit under the bound, the next
	// waits. Without the bound all eight would end.
	n := 0
	for stalled := time.After(100 * time.Millisecond); ; {
		select {
		case <-ended:
			n++
			continue
		case <-stalled:
		}
		break
	}
	if n > 5 {
		t.Errorf("%d sessions ended while the writer stalled, want at most 5 (3 taken + 2 held)", n)
	}
	close(w.release)
	for range ended {
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data []struct {
			SessionID string `json:"session_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(w.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Data) != 8 {
		t.Errorf("%d entries, want 8", len(doc.Data))
	}
}

// checkShape fails t on every way doc differs from s.
func checkShape(t *testing.T, name string, doc []byte, s shape.Shape) {
	t.Helper()
	for _, e := range shape.Check(name, doc, s) {
		t.Error(e)
	}
}
