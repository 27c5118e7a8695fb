package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surgebench/surge/metrics"
)

// TestOutputs: outputs.json holds every record's text and identifiers,
// the profile's sorted by session and turn under "data", the warmup's
// under "warmup", secrets redacted, and the records' file removed.
func TestOutputs(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), OutputsFile)
	start := time.Unix(1000, 0)
	o, err := NewOutputs(path, start, "sk-secret-key")
	if err != nil {
		t.Fatal(err)
	}
	rec := func(session int64, turn int, phase metrics.Phase, text string) *metrics.Record {
		return &metrics.Record{Session: session, TurnIndex: turn, Phase: phase, ConversationID: "c", RequestID: "r",
			SentNs: 10, EndNs: 2e6, TokenNs: []int64{1e6, 2e6}, Text: text, Streamed: true}
	}
	for _, r := range []*metrics.Record{rec(1, 1, metrics.Profile, "b1"), rec(0, 0, metrics.Warmup, "w"), rec(1, 0, metrics.Profile, "b0"),
		rec(0, 0, metrics.Profile, "a sk-secret-key")} {
		v := metrics.Compute(r, nil)
		o.WriteRecord(r, &v, true)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema_version"`
		Data   []struct {
			Session int64                     `json:"session_num"`
			Turn    int                       `json:"turn_index"`
			Phase   string                    `json:"benchmark_phase"`
			Start   int64                     `json:"request_start_ns"`
			Metrics map[string]map[string]any `json:"metrics"`
			Text    *string                   `json:"response_text"`
		} `json:"data"`
		Warmup []struct {
			Text  string `json:"response_text"`
			Phase string `json:"benchmark_phase"`
		} `json:"warmup"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	var texts []string
	for _, d := range doc.Data {
		texts = append(texts, *d.Text)
	}
	if doc.Schema != "1.1" || len(doc.Data) != 3 || texts[0] != "a <redacted>" || texts[1] != "b0" || texts[2] != "b1" ||
		len(doc.Warmup) != 1 || doc.Warmup[0].Text != "w" || doc.Warmup[0].Phase != "warmup" {
		t.Errorf("outputs.json:\n%s", b)
	}
	if d := doc.Data[0]; d.Phase != "profiling" || d.Start != start.UnixNano()+10 || d.Metrics["request_latency"]["unit"] != "ms" {
		t.Errorf("first entry %+v", d)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the records' file was left: %v", err)
	}
}
