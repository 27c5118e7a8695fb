package datasets

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// BurstGPTRow is one row of a BurstGPT trace CSV (AIPerf's
// burst_gpt_trace; github.com/HPMLL/BurstGPT): Timestamp, Model, Request
// tokens, Response tokens, Total tokens, Log Type. Only Timestamp, Request
// tokens and Response tokens are read.
type BurstGPTRow struct {
	Line int
	// Timestamp is the request's time in seconds from the trace's start.
	Timestamp float64
	// RequestTokens and ResponseTokens are the request's token counts.
	RequestTokens, ResponseTokens int
}

// burstGPTColumns are the columns read, in the order BurstGPTRow holds them.
var burstGPTColumns = [...]string{"Timestamp", "Request tokens", "Response tokens"}

// burstGPTHeader maps the header's columns; idx[i] is burstGPTColumns[i]'s.
func burstGPTHeader(file string, cols []string) (idx [3]int, err error) {
	for i := range idx {
		idx[i] = -1
	}
	for c, col := range cols {
		col = strings.TrimSpace(strings.TrimPrefix(col, "\ufeff"))
		for i, want := range burstGPTColumns {
			if col == want {
				idx[i] = c
			}
		}
	}
	for i, c := range idx {
		if c < 0 {
			return idx, inputErrorf(file, 1, "header: missing column %q (want %s)", burstGPTColumns[i], strings.Join(burstGPTColumns[:], ", "))
		}
	}
	return idx, nil
}

// ParseBurstGPTRecord parses one data record given the header's column
// indexes (burstGPTHeader).
func ParseBurstGPTRecord(file string, line int, rec []string, idx [3]int) (BurstGPTRow, error) {
	r := BurstGPTRow{Line: line}
	for _, c := range idx {
		if c >= len(rec) {
			return r, inputErrorf(file, line, "want at least %d columns, got %d", c+1, len(rec))
		}
	}
	s := strings.TrimSpace(rec[idx[0]])
	ts, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(ts) || math.IsInf(ts, 0) {
		return r, &InputError{File: file, Line: line, Msg: fmt.Sprintf("Timestamp %q: want a number of seconds", s), Err: err}
	}
	if msg := checkSeconds(ts); msg != "" {
		return r, inputErrorf(file, line, "Timestamp %v: %s", ts, msg)
	}
	r.Timestamp = ts
	for k, dst := range []*int{&r.RequestTokens, &r.ResponseTokens} {
		s := strings.TrimSpace(rec[idx[k+1]])
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return r, &InputError{File: file, Line: line, Msg: fmt.Sprintf("%s %q: want a non-negative integer", burstGPTColumns[k+1], s), Err: err}
		}
		*dst = v
	}
	return r, nil
}

// readBurstGPT parses a BurstGPT CSV, streaming.
func readBurstGPT(r io.Reader, file string) ([]BurstGPTRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, inputErrorf(file, 0, "empty file (want a header with %s)", strings.Join(burstGPTColumns[:], ", "))
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	idx, err := burstGPTHeader(file, head)
	if err != nil {
		return nil, err
	}
	var rows []BurstGPTRow
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		line, _ := cr.FieldPos(0)
		row, err := ParseBurstGPTRecord(file, line, rec, idx)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, inputErrorf(file, 0, "no rows after the header")
	}
	return rows, nil
}

// csvError turns an encoding/csv error into an *InputError at its line.
func csvError(file string, err error) error {
	var pe *csv.ParseError
	var ie *InputError
	switch {
	case errors.As(err, &ie):
		return ie // it says where (invalid UTF-8, a limit)
	case errors.As(err, &pe):
		return &InputError{File: file, Line: pe.StartLine, Msg: "malformed CSV: " + pe.Err.Error(), Err: err}
	}
	return &InputError{File: file, Msg: fmt.Sprintf("read: %v", err), Err: err}
}

// burstGPTDataset builds one single-turn conversation per row: a prompt of
// Request tokens, an output cap of Response tokens, the row's timestamp.
// BurstGPT logs failed requests with 0 response tokens, and some rows have
// 0 request tokens; such a row is sent with a 1-token prompt or cap (0
// would send no cap at all), and zeros counts them.
func burstGPTDataset(file string, rows []BurstGPTRow, p *prompter, seed uint64) (d *Dataset, zeros int) {
	d = &Dataset{Name: file, Conversations: make([]Conversation, len(rows))}
	src := &blockSource{p: p, digits: p.digits(int64(len(rows))), seed: seed}
	for i, r := range rows {
		in, out := r.RequestTokens, r.ResponseTokens
		if in == 0 || out == 0 {
			zeros++
		}
		pr := &Prompt{src: src, first: int64(i), tokens: max(in, 1)}
		d.Conversations[i] = Conversation{
			ID: fmt.Sprintf("burstgpt-%d", r.Line),
			Turns: []Turn{{Prompt: pr, InputTokens: src.got(int64(i), pr.tokens), MaxTokens: max(out, 1),
				Timestamp: millis(r.Timestamp * 1000), HasTimestamp: true}},
		}
	}
	return d, zeros
}
