package vllmbench

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/bounded"
)

// The bounds on the dataset files vLLM's readers take: a whole file, and
// one line of it (a JSONL row, a CSV record).
const (
	maxDatasetFile = 16 << 30
	maxLine        = 64 << 20
)

// openDataset opens a dataset file through the one bounded reader, its
// error naming the flag.
func openDataset(ctx context.Context, path string) (*bounded.File, error) {
	f, err := bounded.Open(ctx, path, maxDatasetFile)
	if err != nil {
		return nil, &cmdline.UsageError{Err: fmt.Errorf("%s: --dataset-path: %w", tool, err)}
	}
	return f, nil
}

// inputError is bad content in a dataset file, naming where (exit 2).
func inputError(file string, where string, format string, a ...any) error {
	return &cmdline.UsageError{Err: fmt.Errorf("%s:%s: %s", file, where, fmt.Sprintf(format, a...))}
}

// readFailed is a read that failed: an interrupt or a file over its
// bound as it is, else bad content naming where.
func readFailed(file, where string, err error) error {
	var big *bounded.TooLargeError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.As(err, &big):
		return &cmdline.UsageError{Err: fmt.Errorf("%s: --dataset-path: %w", tool, err)}
	}
	return inputError(file, where, "%v", err)
}

// create makes the rewritten file (removed by the caller's folder).
func create(path string) (*os.File, *bufio.Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, bufio.NewWriterSize(f, 64<<10), nil
}

func finish(f *os.File, w *bufio.Writer, err error) error {
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// firstPairs rewrites a ShareGPT JSON array as vLLM reads it: an entry
// with at least two messages in "conversations" is kept as its first two,
// the first the prompt and the second the reply whatever their roles say.
// surge's ShareGPT reader then filters them by vLLM's bounds.
func firstPairs(ctx context.Context, in, out string) (err error) {
	src, err := openDataset(ctx, in)
	if err != nil {
		return err
	}
	defer src.Close()
	f, w, err := create(out)
	if err != nil {
		return err
	}
	defer func() { err = finish(f, w, err) }()
	return shareGPTFirstPairs(src, w, in)
}

// shareGPTFirstPairs is firstPairs' reading and writing, named file.
func shareGPTFirstPairs(r io.Reader, w io.Writer, file string) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
		return inputError(file, "1", "want a JSON array of conversations (ShareGPT's layout)")
	}
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	type message struct {
		Value json.RawMessage `json:"value"`
	}
	kept := 0
	for n := 1; dec.More(); n++ {
		var e struct {
			Conversations []message `json:"conversations"`
		}
		if err := dec.Decode(&e); err != nil {
			return readFailed(file, fmt.Sprintf("entry %d", n), err)
		}
		if len(e.Conversations) < 2 {
			continue
		}
		var prompt, reply string
		if json.Unmarshal(e.Conversations[0].Value, &prompt) != nil || json.Unmarshal(e.Conversations[1].Value, &reply) != nil {
			return inputError(file, fmt.Sprintf("entry %d", n), `a message's "value" is not a string`)
		}
		b, err := json.Marshal(map[string]any{"conversations": []map[string]string{{"from": "human", "value": prompt}, {"from": "gpt", "value": reply}}})
		if err != nil {
			return err
		}
		sep := ",\n"
		if kept == 0 {
			sep = "\n"
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		kept++
	}
	if _, err := dec.Token(); err != nil {
		return inputError(file, "end", "the JSON array does not end: %v", err)
	}
	if kept == 0 {
		return inputError(file, "1", "no conversation with two messages (vLLM keeps those only)")
	}
	_, err = io.WriteString(w, "\n]\n")
	return err
}

// customPrompts rewrites vLLM's custom JSONL ({"prompt": …} a line) as
// surge's single_turn JSONL, each turn capped at outLen tokens.
func customPrompts(ctx context.Context, in, out string, outLen int) (err error) {
	src, err := openDataset(ctx, in)
	if err != nil {
		return err
	}
	defer src.Close()
	f, w, err := create(out)
	if err != nil {
		return err
	}
	defer func() { err = finish(f, w, err) }()
	return customLines(src, w, in, outLen)
}

// customLines is customPrompts' reading and writing, named file.
func customLines(r io.Reader, w io.Writer, file string, outLen int) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	n, kept := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var row map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			return inputError(file, strconv.Itoa(n), "not a JSON object: %v", err)
		}
		raw, ok := row["prompt"]
		if !ok {
			return inputError(file, strconv.Itoa(n), "JSONL file must contain a 'prompt' column.")
		}
		var prompt string
		if err := json.Unmarshal(raw, &prompt); err != nil {
			return inputError(file, strconv.Itoa(n), `"prompt" is not a string`)
		}
		b, err := json.Marshal(map[string]any{"text": prompt, "output_length": outLen})
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
		kept++
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return inputError(file, strconv.Itoa(n+1), "a line over %d MiB", maxLine>>20)
		}
		return readFailed(file, strconv.Itoa(n+1), err)
	}
	if kept == 0 {
		return inputError(file, "1", "no prompts")
	}
	return nil
}

// gpt4Rows rewrites BurstGPT's CSV as vLLM reads it: the rows of model
// "GPT-4" whose "Response tokens" is positive (the others failed), in
// surge's burst_gpt_trace layout.
func gpt4Rows(ctx context.Context, in, out string) (err error) {
	src, err := openDataset(ctx, in)
	if err != nil {
		return err
	}
	defer src.Close()
	f, w, err := create(out)
	if err != nil {
		return err
	}
	defer func() { err = finish(f, w, err) }()
	return burstGPTRows(src, w, in)
}

// burstGPTRows is gpt4Rows' reading and writing, named file.
func burstGPTRows(r io.Reader, w io.Writer, file string) error {
	cr := csv.NewReader(&lineCap{r: bufio.NewReaderSize(r, 1<<20)})
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return readFailed(file, "1", fmt.Errorf("want BurstGPT's CSV header: %w", err))
	}
	head = append([]string(nil), head...)
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	need := []string{"Timestamp", "Model", "Request tokens", "Response tokens"}
	for _, c := range need {
		if _, ok := col[c]; !ok {
			return inputError(file, "1", "no %q column (BurstGPT's columns are Timestamp, Model, Request tokens, Response tokens, Total tokens, Log Type)", c)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"Timestamp", "Request tokens", "Response tokens"}); err != nil {
		return err
	}
	kept := 0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return inputError(file, strconv.Itoa(pe.Line), "%v", pe.Err)
			}
			return readFailed(file, "?", err)
		}
		line, _ := cr.FieldPos(0)
		if rec[col["Model"]] != "GPT-4" {
			continue
		}
		resp, err := strconv.ParseFloat(strings.TrimSpace(rec[col["Response tokens"]]), 64)
		if err != nil {
			return inputError(file, strconv.Itoa(line), "Response tokens %q is not a number", rec[col["Response tokens"]])
		}
		if !(resp > 0) {
			continue
		}
		if err := cw.Write([]string{rec[col["Timestamp"]], rec[col["Request tokens"]], rec[col["Response tokens"]]}); err != nil {
			return err
		}
		kept++
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if kept == 0 {
		return inputError(file, "2", `no rows of model "GPT-4" with positive Response tokens (vLLM keeps those only)`)
	}
	return nil
}

// lineCap fails a CSV line (a record's bytes up to a newline) past
// maxLine: encoding/csv holds a whole record in memory.
type lineCap struct {
	r   *bufio.Reader
	run int
}

func (l *lineCap) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.run = 0
			continue
		}
		if l.run++; l.run > maxLine {
			return 0, fmt.Errorf("a line over %d MiB", maxLine>>20)
		}
	}
	return n, err
}
