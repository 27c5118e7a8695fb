package schedule

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func drain(s Schedule) []time.Duration {
	var out []time.Duration
	for {
		at, ok := s.Next()
		if !ok {
			return out
		}
		out = append(out, at)
	}
}

func TestFixed(t *testing.T) {
	t.Parallel()
	trace := ms(1000, 1500, 1200, 1200, 3000, 2500) // unsorted, a tie at 1200
	tests := []struct {
		name     string
		offsets  []time.Duration
		opts     []FixedOption
		wantAt   []time.Duration
		wantRows []int
	}{
		{
			name: "exact replay, sorted stably", offsets: trace,
			wantAt:   ms(1000, 1200, 1200, 1500, 2500, 3000),
			wantRows: []int{0, 2, 3, 1, 5, 4},
		},
		{
			name: "auto offset", offsets: trace, opts: []FixedOption{AutoOffset()},
			wantAt:   ms(0, 200, 200, 500, 1500, 2000),
			wantRows: []int{0, 2, 3, 1, 5, 4},
		},
		{
			name: "start offset becomes zero", offsets: trace, opts: []FixedOption{StartOffset(1200 * time.Millisecond)},
			wantAt:   ms(0, 0, 300, 1300, 1800),
			wantRows: []int{2, 3, 1, 5, 4},
		},
		{
			name: "start and end inclusive", offsets: trace,
			opts:     []FixedOption{StartOffset(1200 * time.Millisecond), EndOffset(2500 * time.Millisecond)},
			wantAt:   ms(0, 0, 300, 1300),
			wantRows: []int{2, 3, 1, 5},
		},
		{
			name: "end only keeps trace zero", offsets: trace, opts: []FixedOption{EndOffset(1200 * time.Millisecond)},
			wantAt:   ms(1000, 1200, 1200),
			wantRows: []int{0, 2, 3},
		},
		{
			name: "auto offset wins over start offset as zero", offsets: trace,
			opts:     []FixedOption{StartOffset(1100 * time.Millisecond), AutoOffset()},
			wantAt:   ms(0, 0, 300, 1300, 1800),
			wantRows: []int{2, 3, 1, 5, 4},
		},
		{
			name: "negative timestamps are due at once", offsets: ms(-100, -50, 0, 40),
			wantAt:   ms(0, 0, 0, 40),
			wantRows: []int{0, 1, 2, 3},
		},
	}
	for _, tt := range tests {
		r, err := Fixed(tt.offsets, tt.opts...)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if r.Len() != len(tt.wantAt) {
			t.Errorf("%s: Len = %d, want %d", tt.name, r.Len(), len(tt.wantAt))
		}
		if diff := cmp.Diff(tt.wantRows, r.Rows()); diff != "" {
			t.Errorf("%s: rows (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.wantAt, r.Offsets()); diff != "" {
			t.Errorf("%s: offsets (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.wantAt, drain(r)); diff != "" {
			t.Errorf("%s: Next (-want +got):\n%s", tt.name, diff)
		}
		if got := r.Row(0); got != tt.wantRows[0] {
			t.Errorf("%s: Row(0) = %d, want %d", tt.name, got, tt.wantRows[0])
		}
	}
}

func TestFixedErrors(t *testing.T) {
	t.Parallel()
	trace := ms(0, 100, 200)
	tests := []struct {
		name    string
		offsets []time.Duration
		opts    []FixedOption
		want    string
		noTS    bool
	}{
		{"no rows", nil, nil, "trace has no rows to replay", true},
		{"end before start", trace, []FixedOption{StartOffset(200 * time.Millisecond), EndOffset(100 * time.Millisecond)},
			"end offset 100ms is before the start offset 200ms", false},
		{"negative start", trace, []FixedOption{StartOffset(-time.Millisecond)},
			"start offset must be ≥ 0, got -1ms", false},
		{"empty window", trace, []FixedOption{StartOffset(150 * time.Millisecond), EndOffset(180 * time.Millisecond)},
			"no trace rows between 150ms and 180ms", false},
		{"empty window, start only", trace, []FixedOption{StartOffset(time.Second)},
			"no trace rows between 1000ms and the end", false},
	}
	for _, tt := range tests {
		_, err := Fixed(tt.offsets, tt.opts...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error = %v, want %q", tt.name, err, tt.want)
			continue
		}
		if errors.Is(err, ErrNoTimestamps) != tt.noTS {
			t.Errorf("%s: errors.Is(ErrNoTimestamps) = %v", tt.name, !tt.noTS)
		}
	}
}

func TestTraceOffsets(t *testing.T) {
	t.Parallel()
	ts := ms(5, 0, 7)
	got, err := TraceOffsets(3, func(i int) (time.Duration, bool) { return ts[i], true })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ts, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = TraceOffsets(3, func(i int) (time.Duration, bool) { return ts[i], i != 1 })
	want := "trace needs a timestamp on every row: row 2 has none"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrNoTimestamps) {
		t.Errorf("error = %v, want %q wrapping ErrNoTimestamps", err, want)
	}
}
