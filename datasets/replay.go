package datasets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// bodyTurn is a turn that sends b byte for byte. The turn is standalone
// (a body holds its conversation so far); its output cap, for the record,
// is the body's max_tokens or max_completion_tokens.
func bodyTurn(b []byte) Turn {
	var caps struct {
		MaxTokens           *int `json:"max_tokens"`
		MaxCompletionTokens *int `json:"max_completion_tokens"`
		MaxOutputTokens     *int `json:"max_output_tokens"`
	}
	_ = json.Unmarshal(b, &caps)
	t := Turn{Body: b, Standalone: true}
	for _, c := range []*int{caps.MaxTokens, caps.MaxCompletionTokens, caps.MaxOutputTokens} {
		if c != nil && *c > 0 {
			t.MaxTokens = *c
			break
		}
	}
	return t
}

// checkBody validates a request body: a JSON object.
func checkBody(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return "want a JSON object (a whole request body)"
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return fmt.Sprintf("malformed JSON: %v", err)
	}
	return ""
}

// readRawPayload reads AIPerf's raw_payload input: a JSON Lines file whose
// every line is a whole request body, sent byte for byte as a
// conversation of its own; or a directory whose every *.jsonl file is one
// conversation, its lines the turns (files in name order).
func readRawPayload(ctx context.Context, path string, o Options) (*Dataset, int, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, &InputError{File: path, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
	}
	d := &Dataset{Name: path}
	rows := 0
	read := func(file string, each func(line int, t Turn)) error {
		f, closeFile, err := openInput(ctx, file, o)
		if err != nil {
			return err
		}
		defer closeFile()
		return eachLine(f, file, func(line int, b []byte) error {
			if msg := checkBody(b); msg != "" {
				return inputErrorf(file, line, "%s", msg)
			}
			rows++
			each(line, bodyTurn(bytes.Clone(bytes.TrimSpace(b))))
			return nil
		})
	}
	if !st.IsDir() {
		err := read(path, func(line int, t Turn) {
			d.Conversations = append(d.Conversations, Conversation{ID: fmt.Sprintf("line-%d", line), Turns: []Turn{t}})
		})
		return d, rows, err
	}
	files, err := filepath.Glob(filepath.Join(path, "*.jsonl"))
	if err != nil {
		return nil, 0, &InputError{File: path, Msg: err.Error(), Err: err}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, 0, inputErrorf(path, 0, "no *.jsonl files in the directory")
	}
	for _, file := range files {
		c := Conversation{ID: filepath.Base(file)}
		if err := read(file, func(_ int, t Turn) { c.Turns = append(c.Turns, t) }); err != nil {
			return nil, 0, err
		}
		d.Conversations = append(d.Conversations, c)
	}
	return d, rows, nil
}

// inputsEntry is one session of an inputs.json file.
type inputsEntry struct {
	SessionID *string           `json:"session_id"`
	Payloads  []json.RawMessage `json:"payloads"`
}

// readInputsJSON reads AIPerf's inputs.json (what surge and AIPerf write
// with a run: {"data": [{"session_id": …, "payloads": [body, …]}, …]}):
// every session a conversation, every payload a turn sent byte for byte.
// A null payload is a turn the run never sent: its session ends before it
// (skipped counts them). Rows counts the payloads replayed.
func readInputsJSON(r io.Reader, file string) (d *Dataset, rows, skipped int, err error) {
	s := newJSONStream(r, file)
	if err := s.delim('{', `want a JSON object {"data": [...]}`); err != nil {
		return nil, 0, 0, err
	}
	d = &Dataset{Name: file}
	data := false
	for s.dec.More() {
		k, err := s.key()
		if err != nil {
			return nil, 0, 0, err
		}
		if k != "data" {
			var skip json.RawMessage
			if _, err := s.value(&skip); err != nil {
				return nil, 0, 0, err
			}
			continue
		}
		data = true
		if err := s.delim('[', `"data" must be a list of sessions`); err != nil {
			return nil, 0, 0, err
		}
		for s.dec.More() {
			var e inputsEntry
			line, err := s.value(&e)
			if err != nil {
				return nil, 0, 0, err
			}
			switch {
			case e.SessionID == nil:
				return nil, 0, 0, inputErrorf(file, line, `missing required field "session_id"`)
			case e.Payloads == nil:
				return nil, 0, 0, inputErrorf(file, line, `missing required field "payloads"`)
			}
			c := Conversation{ID: *e.SessionID}
			for i, p := range e.Payloads {
				if bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
					skipped += len(e.Payloads) - i
					break
				}
				if msg := checkBody(p); msg != "" {
					return nil, 0, 0, inputErrorf(file, line, "payloads[%d]: %s", i, msg)
				}
				c.Turns = append(c.Turns, bodyTurn(p))
				rows++
			}
			if len(c.Turns) > 0 {
				d.Conversations = append(d.Conversations, c)
			}
		}
		if err := s.delim(']', `want the end of "data"`); err != nil {
			return nil, 0, 0, err
		}
	}
	if err := s.delim('}', "want the end of the object"); err != nil {
		return nil, 0, 0, err
	}
	if err := s.end(); err != nil {
		return nil, 0, 0, err
	}
	if !data {
		return nil, 0, 0, inputErrorf(file, 0, `missing required field "data"`)
	}
	if rows == 0 {
		return nil, 0, 0, inputErrorf(file, 0, "no payloads to replay")
	}
	return d, rows, skipped, nil
}
