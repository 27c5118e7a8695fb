package peers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/metrics/artifact"
)

// Request is one request of a finished run as the peers' result files
// need it, read from surge's per-request export after the run.
type Request struct {
	// Num is the request's place in send order (request_num), ID its
	// x_request_id, Conversation and Turn where its prompt came from.
	Num          int
	ID           string
	Conversation string
	Turn         int
	// Stage is the surge stage that sent it.
	Stage int
	// IntendedNs, StartNs, SentNs and EndNs are wall-clock nanoseconds:
	// when it was due, when the client began it, when its body went out,
	// and when its last byte came back (0: unknown).
	IntendedNs, StartNs, SentNs, EndNs int64
	// TTFT and Latency are milliseconds from its start to its first
	// content and to its last (AIPerf's time_to_first_token and
	// request_latency); FirstOutput is the first non-reasoning content's.
	TTFT, Latency, FirstOutput float64
	// ITL is AIPerf's inter_token_latency (ms): the decode time over the
	// tokens after the first (NaN: not defined, OSL < 2).
	ITL float64
	// Chunks are the gaps (ms) between the content events after the
	// first (inter_chunk_latency): what vLLM calls a request's ITLs.
	Chunks []float64
	// ISL and OSL are surge's token counts (input_sequence_length,
	// output_sequence_length); PromptTokens and CompletionTokens the
	// server's usage (-1: the server reported none).
	ISL, OSL                       int
	PromptTokens, CompletionTokens int
	// Err is the failure, nil when the request succeeded; Cancelled is
	// set when the client cancelled it.
	Err       *RequestError
	Cancelled bool
	// Good is whether it met every --goodput objective (true without
	// any).
	Good bool
	// Text is the generated text (with Load's texts; "" otherwise).
	Text string
}

// RequestError is a failed request's error as surge recorded it.
type RequestError struct {
	Code    any    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// String is the error as one line: its type, code and message.
func (e *RequestError) String() string {
	s := e.Type
	if e.Code != nil {
		s += fmt.Sprintf(" %v", e.Code)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return strings.TrimSpace(s)
}

// Prompt is the request's prompt length by the server's count when it
// gave one (as vLLM and inference-perf take it), else surge's.
func (r Request) Prompt() int {
	if r.PromptTokens >= 0 {
		return r.PromptTokens
	}
	return r.ISL
}

// Output is the request's output length by the server's count when it
// gave one, else surge's (vLLM's rule: usage, else its tokenizer).
func (r Request) Output() int {
	if r.CompletionTokens >= 0 {
		return r.CompletionTokens
	}
	return r.OSL
}

// Finished is a finished surge run read back from its artifact folder.
type Finished struct {
	Dir string
	// Summary is surge's summary export.
	Summary *artifact.Summary
	// Requests are the profile's requests in send order; Warmup counts
	// the warmup's.
	Requests []Request
	Warmup   int
	// Start and End are the run's wall-clock start and end (the
	// summary's start_time and end_time).
	Start, End time.Time
}

// Duration is the run's benchmark_duration in seconds: from its first
// request's start to its last response (AIPerf's definition).
func (f *Finished) Duration() float64 {
	if f.Summary != nil {
		if st, ok := f.Summary.Metrics["benchmark_duration"]; ok {
			return st.Avg
		}
	}
	return 0
}

// Limits on what is read back: surge's own files, bounded all the same.
const (
	maxSummary = 256 << 20
	maxRecords = 64 << 30
)

// Load reads the finished run in dir: its summary and its per-request
// records, and with texts the generated text of each (from outputs.json,
// which the run must have written: --export-outputs-json).
func Load(ctx context.Context, dir string, texts bool) (*Finished, error) {
	b, err := bounded.ReadFile(ctx, filepath.Join(dir, spec.FileJSON), maxSummary)
	if err != nil {
		return nil, fmt.Errorf("reading the run back: %w", err)
	}
	f := &Finished{Dir: dir}
	if f.Summary, err = artifact.ParseSummary(b); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, spec.FileJSON), err)
	}
	f.Start, _ = time.Parse(time.RFC3339Nano, f.Summary.StartTime)
	f.End, _ = time.Parse(time.RFC3339Nano, f.Summary.EndTime)
	path := filepath.Join(dir, spec.FileJSONL)
	rf, err := bounded.Open(ctx, path, maxRecords)
	if err != nil {
		return nil, fmt.Errorf("reading the run back: %w", err)
	}
	defer rf.Close()
	if f.Requests, f.Warmup, err = readRequests(rf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if texts {
		if err := f.readTexts(ctx); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// record is one line of profile_export.jsonl, the fields the peers read.
type record struct {
	Metadata struct {
		RequestNum     *int   `json:"request_num"`
		RequestID      string `json:"x_request_id"`
		ConversationID string `json:"conversation_id"`
		TurnIndex      int    `json:"turn_index"`
		Phase          string `json:"benchmark_phase"`
		StartNs        int64  `json:"request_start_ns"`
		EndNs          int64  `json:"request_end_ns"`
		CreditNs       int64  `json:"credit_issued_ns"`
		Cancelled      bool   `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]metricValue `json:"metrics"`
	Error   *RequestError          `json:"error"`
	Surge   struct {
		Stage      int   `json:"stage"`
		IntendedNs int64 `json:"intended_ns"`
		SentNs     int64 `json:"request_sent_ns"`
		Good       *bool `json:"good"`
	} `json:"surge"`
}

// metricValue is a record's metric: a number or a list, in its unit.
type metricValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// scale converts a value in unit to milliseconds (a count: 1).
func scale(unit string) float64 {
	switch unit {
	case "ns":
		return 1e-6
	case "us":
		return 1e-3
	case "s", "sec":
		return 1e3
	}
	return 1
}

func (m metricValue) number() (float64, bool) {
	var f float64
	if json.Unmarshal(m.Value, &f) != nil {
		return 0, false
	}
	return f * scale(m.Unit), true
}

func (m metricValue) list() []float64 {
	var fs []float64
	if json.Unmarshal(m.Value, &fs) != nil {
		return nil
	}
	k := scale(m.Unit)
	for i := range fs {
		fs[i] *= k
	}
	return fs
}

// readRequests reads the per-request JSONL: the profile's requests in
// send order, and how many the warmup sent.
func readRequests(r io.Reader) ([]Request, int, error) {
	dec := json.NewDecoder(r)
	var out []Request
	warmup := 0
	for n := 1; ; n++ {
		var rec record
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("record %d: %w", n, err)
		}
		if rec.Metadata.Phase == "warmup" {
			warmup++
			continue
		}
		q := Request{Num: len(out), ID: rec.Metadata.RequestID, Conversation: rec.Metadata.ConversationID, Turn: rec.Metadata.TurnIndex,
			Stage: rec.Surge.Stage, IntendedNs: rec.Surge.IntendedNs, StartNs: rec.Metadata.StartNs, SentNs: rec.Surge.SentNs,
			EndNs: rec.Metadata.EndNs, Err: rec.Error, Cancelled: rec.Metadata.Cancelled, Good: rec.Surge.Good == nil || *rec.Surge.Good,
			ITL: math.NaN(), PromptTokens: -1, CompletionTokens: -1}
		if rec.Metadata.RequestNum != nil {
			q.Num = *rec.Metadata.RequestNum
		}
		if q.IntendedNs == 0 {
			q.IntendedNs = rec.Metadata.CreditNs
		}
		num := func(tag string, dst *float64) {
			if v, ok := rec.Metrics[tag]; ok {
				if f, ok := v.number(); ok {
					*dst = f
				}
			}
		}
		count := func(tag string, dst *int) {
			f := -1.0
			num(tag, &f)
			if f >= 0 {
				*dst = int(math.Round(f))
			}
		}
		num("time_to_first_token", &q.TTFT)
		num("time_to_first_output_token", &q.FirstOutput)
		num("request_latency", &q.Latency)
		num("inter_token_latency", &q.ITL)
		count("input_sequence_length", &q.ISL)
		count("output_sequence_length", &q.OSL)
		count("usage_prompt_tokens", &q.PromptTokens)
		count("usage_completion_tokens", &q.CompletionTokens)
		if v, ok := rec.Metrics["inter_chunk_latency"]; ok {
			q.Chunks = v.list()
		}
		out = append(out, q)
	}
	slices.SortStableFunc(out, func(a, b Request) int { return a.Num - b.Num })
	return out, warmup, nil
}

// readTexts joins each request with its generated text from outputs.json.
func (f *Finished) readTexts(ctx context.Context) error {
	path := filepath.Join(f.Dir, "outputs.json")
	rf, err := bounded.Open(ctx, path, maxRecords)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a run that sent nothing wrote none
	}
	if err != nil {
		return fmt.Errorf("reading the run's texts back: %w", err)
	}
	defer rf.Close()
	var doc struct {
		Data []struct {
			RequestID string  `json:"x_request_id"`
			Text      *string `json:"response_text"`
		} `json:"data"`
	}
	if err := json.NewDecoder(rf).Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	byID := make(map[string]string, len(doc.Data))
	for _, e := range doc.Data {
		if e.Text != nil {
			byID[e.RequestID] = *e.Text
		}
	}
	for i := range f.Requests {
		f.Requests[i].Text = byID[f.Requests[i].ID]
	}
	return nil
}
