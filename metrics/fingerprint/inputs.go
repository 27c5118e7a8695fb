package fingerprint

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
)

// ReadInputs adds every payload of an inputs.json ({"data":[{session_id,
// payloads:[…]}]}, AIPerf's shape: payloads[i] is turn i; surge's older
// files gave one payload and its turn_index) to d, streaming so a large
// file is never held whole.
func ReadInputs(r io.Reader, d *Dataset) error {
	return EachSession(r, func(raw json.RawMessage) error {
		var s struct {
			SessionID string            `json:"session_id"`
			TurnIndex int               `json:"turn_index"`
			Payloads  []json.RawMessage `json:"payloads"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		for i, p := range s.Payloads {
			d.Add(s.SessionID, s.TurnIndex+i, p)
		}
		return nil
	})
}

// EachSession streams the entries of an inputs.json's "data" array to f,
// one session at a time; other keys are skipped.
func EachSession(r io.Reader, f func(json.RawMessage) error) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	if err := expect(dec, json.Delim('{')); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if key, _ := t.(string); key != "data" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return err
			}
			continue
		}
		if err := expect(dec, json.Delim('[')); err != nil {
			return err
		}
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if err := f(raw); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	}
	return nil
}

func expect(dec *json.Decoder, want json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != want {
		return fmt.Errorf("inputs: want %v, got %v", want, t)
	}
	return nil
}
