package datasets

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
)

// AzureRow is one row of an Azure LLM inference trace CSV
// (TIMESTAMP,ContextTokens,GeneratedTokens).
type AzureRow struct {
	Line            int
	Time            time.Time
	ContextTokens   int
	GeneratedTokens int
}

// azureTimeLayout matches "2023-11-16 18:17:03.9799600" (fraction optional).
const azureTimeLayout = "2006-01-02 15:04:05.999999999"

// azureColumns are the required header columns.
var azureColumns = [...]string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// azureHeader maps the header's columns; idx[i] is azureColumns[i]'s index.
func azureHeader(file string, b []byte) (idx [3]int, ncol int, err error) {
	cols := bytes.Split(b, []byte(","))
	for i := range idx {
		idx[i] = -1
	}
	for c, col := range cols {
		for i, want := range azureColumns {
			if string(bytes.TrimSpace(col)) == want {
				idx[i] = c
			}
		}
	}
	for i, c := range idx {
		if c < 0 {
			return idx, 0, inputErrorf(file, 1, "header: missing column %q (want %s,%s,%s)", azureColumns[i], azureColumns[0], azureColumns[1], azureColumns[2])
		}
	}
	return idx, len(cols), nil
}

// ParseAzureLine parses one data row given the header's column indexes.
func ParseAzureLine(file string, line int, b []byte, idx [3]int, ncol int) (AzureRow, error) {
	cols := bytes.Split(b, []byte(","))
	if len(cols) != ncol {
		return AzureRow{}, inputErrorf(file, line, "want %d columns, got %d", ncol, len(cols))
	}
	r := AzureRow{Line: line}
	ts := string(bytes.TrimSpace(cols[idx[0]]))
	t, err := time.Parse(azureTimeLayout, ts)
	if err != nil {
		return r, &InputError{File: file, Line: line, Msg: fmt.Sprintf("TIMESTAMP %q: want YYYY-MM-DD hh:mm:ss.fffffff", ts), Err: err}
	}
	r.Time = t
	for k, dst := range []*int{&r.ContextTokens, &r.GeneratedTokens} {
		s := string(bytes.TrimSpace(cols[idx[k+1]]))
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return r, &InputError{File: file, Line: line, Msg: fmt.Sprintf("%s %q: want a non-negative integer", azureColumns[k+1], s), Err: err}
		}
		*dst = v
	}
	if r.ContextTokens == 0 {
		return r, inputErrorf(file, line, "ContextTokens must be positive, got 0")
	}
	if err := tokensInput(file, line, "ContextTokens", r.ContextTokens); err != nil {
		return r, err
	}
	if err := tokensInput(file, line, "GeneratedTokens", r.GeneratedTokens); err != nil {
		return r, err
	}
	return r, nil
}

// readAzure parses an Azure trace; rows must be in time order.
func readAzure(r io.Reader, file string) ([]AzureRow, error) {
	lr := newLineReader(r, file)
	b, ok, err := lr.next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, inputErrorf(file, 0, "empty file (want a TIMESTAMP,ContextTokens,GeneratedTokens header)")
	}
	idx, ncol, err := azureHeader(file, b)
	if err != nil {
		return nil, err
	}
	var rows []AzureRow
	_, err = lr.each(func(line int, b []byte) error {
		row, err := ParseAzureLine(file, line, b, idx, ncol)
		if err != nil {
			return err
		}
		if n := len(rows); n > 0 && row.Time.Before(rows[n-1].Time) {
			return inputErrorf(file, line, "TIMESTAMP %s is earlier than line %d's", row.Time.Format(azureTimeLayout), rows[n-1].Line)
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, inputErrorf(file, 0, "no rows after the header")
	}
	return rows, nil
}

// azureDataset builds one single-turn conversation per row, its prompt of
// ContextTokens tokens, its cap GeneratedTokens, and its timestamp the
// offset from the first row.
func azureDataset(ctx context.Context, file string, rows []AzureRow, p *prompter, seed uint64) (*Dataset, error) {
	d := &Dataset{Name: file, Conversations: make([]Conversation, len(rows))}
	src := &blockSource{p: p, digits: p.digits(int64(len(rows))), seed: seed}
	t0 := rows[0].Time
	for i, r := range rows {
		if err := canceled(ctx, i, file); err != nil {
			return nil, err
		}
		pr := &Prompt{src: src, first: int64(i), tokens: r.ContextTokens}
		d.Conversations[i] = Conversation{
			ID: fmt.Sprintf("azure-%d", r.Line),
			Turns: []Turn{{Prompt: pr, InputTokens: src.got(int64(i), r.ContextTokens), MaxTokens: r.GeneratedTokens,
				Timestamp: r.Time.Sub(t0), HasTimestamp: true}},
		}
	}
	return d, nil
}
