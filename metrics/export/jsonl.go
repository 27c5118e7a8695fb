package export

import (
	"io"
	"math"
	"sync"
	"time"

	"github.com/surgebench/surge/metrics"
)

// JSONL writes profile_export.jsonl as records complete: one line per
// request sent, failed ones included. A line is written as soon as the
// writer is free, never held back for a batch to fill, so a killed process
// loses nothing but the records in flight; lines that finish while a write
// is under way go out together in the next one (see write). It is safe for
// concurrent use by the metric shards.
type JSONL struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	err   error
	// pending holds whole lines not yet written; writing is set while a
	// shard writes them, and spare is the buffer it wrote last.
	pending, spare []byte
	writing        bool
}

// NewJSONL writes lines to w (an *os.File: unbuffered on purpose). start is
// the wall-clock time of the run clock's zero, for epoch timestamps.
func NewJSONL(w io.Writer, start time.Time) *JSONL { return &JSONL{w: w, start: start} }

type lineMetadata struct {
	RequestID      string `json:"x_request_id"`
	ConversationID string `json:"conversation_id"`
	TurnIndex      int    `json:"turn_index"`
	Phase          string `json:"benchmark_phase"`
	Stage          int    `json:"stage"`
	IntendedNs     int64  `json:"intended_ns,omitempty"`
	StartNs        int64  `json:"request_start_ns"`
	EndNs          int64  `json:"request_end_ns"`
	LagNs          int64  `json:"scheduler_lag_ns"`
	SlotWaitNs     int64  `json:"slot_wait_ns"`
	RetryAfter     string `json:"retry_after,omitempty"`
	ConnRetries    int    `json:"connection_retries"`
	TokenSource    string `json:"token_count_source,omitempty"`
	// TimestampSource is kernel or read for a streamed response.
	TimestampSource  string `json:"timestamp_source,omitempty"`
	ConnectionReused *bool  `json:"connection_reused,omitempty"`
	Good             *bool  `json:"good,omitempty"`
}

type value struct {
	Value any    `json:"value"`
	Unit  string `json:"unit"`
}

type line struct {
	Metadata lineMetadata   `json:"metadata"`
	Metrics  metricMap      `json:"metrics"`
	Error    *metrics.Error `json:"error"`
}

// WriteRecord implements metrics.RecordSink.
func (j *JSONL) WriteRecord(r *metrics.Record, v *metrics.Values, good bool) {
	l := j.line(r, v, good)
	j.write(&l)
}

func (j *JSONL) setErr(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = err
	}
}

// Err returns the first write error.
func (j *JSONL) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *JSONL) epoch(ns int64) int64 {
	if ns == 0 {
		return 0
	}
	return j.start.Add(time.Duration(ns)).UnixNano()
}

func (j *JSONL) line(r *metrics.Record, v *metrics.Values, good bool) line {
	l := line{
		Metadata: lineMetadata{
			RequestID: r.RequestID, ConversationID: r.ConversationID, TurnIndex: r.TurnIndex,
			Phase: r.Phase.String(), Stage: r.Stage,
			IntendedNs: j.epoch(r.IntendedNs), StartNs: j.epoch(r.SentNs), EndNs: j.epoch(r.EndNs),
			SlotWaitNs: r.SlotWaitNs, RetryAfter: r.RetryAfter, ConnRetries: r.ConnectionRetries,
		},
		Metrics: make(metricMap, 48), // sized for every metric: no rehash as it fills
		Error:   r.Err,
	}
	if r.IntendedNs > 0 {
		l.Metadata.LagNs = r.Issued() - r.IntendedNs
	}
	if r.Err != nil {
		l.Metrics[string(metrics.RequestLatency)] = value{roundTo(float64(r.EndNs-r.SentNs) / 1e6), "ms"}
		return l
	}
	l.Metadata.TokenSource = v.Source
	l.Metadata.Good = &good
	if r.Streamed {
		l.Metadata.TimestampSource = "read"
		if r.KernelStamps {
			l.Metadata.TimestampSource = "kernel"
		}
	}
	if r.HTTP.Traced {
		l.Metadata.ConnectionReused = &r.HTTP.Reused
	}
	for i, d := range metrics.HTTPDefs {
		if x := v.HTTP[i]; !math.IsNaN(x) {
			l.Metrics[string(d.Tag)] = value{roundTo(x), d.Unit}
		}
	}
	if len(r.ReadDelayNs) > 0 {
		// Per request, the worst event: the run's distribution is in the
		// summary.
		var worst int32
		for _, d := range r.ReadDelayNs {
			worst = max(worst, d)
		}
		l.Metrics["client_read_delay_max"] = value{roundTo(float64(worst) / 1e6), "ms"}
	}
	for _, d := range metrics.RequestDefs {
		if d.Tag == metrics.ICL {
			if len(v.ICL) > 0 {
				xs := make([]float64, len(v.ICL))
				for i, x := range v.ICL {
					xs[i] = roundTo(x)
				}
				l.Metrics[string(d.Tag)] = value{xs, d.Unit}
			}
			continue
		}
		if x := v.Get(d.Tag); !math.IsNaN(x) {
			l.Metrics[string(d.Tag)] = value{roundTo(x), d.Unit}
		}
	}
	return l
}
