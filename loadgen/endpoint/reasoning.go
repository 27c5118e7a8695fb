package endpoint

import (
	"bytes"
	"fmt"
	"strings"
)

// ReasoningFormat says where a response's reasoning text is.
type ReasoningFormat string

// The reasoning formats (--reasoning-format).
const (
	// ReasoningAuto reads the reasoning fields (reasoning_content,
	// reasoning, thinking deltas) and a <think>…</think> block that opens
	// the content (a server without a reasoning parser).
	ReasoningAuto ReasoningFormat = "auto"
	// ReasoningFields reads only the reasoning fields; content is content.
	ReasoningFields ReasoningFormat = "fields"
	// ReasoningThink also splits every <think>…</think> out of the content.
	ReasoningThink ReasoningFormat = "think"
	// ReasoningNone counts reasoning as content (no TTFO, no reasoning
	// token count).
	ReasoningNone ReasoningFormat = "none"
)

// ParseReasoningFormat validates a reasoning format ("" is auto).
func ParseReasoningFormat(s string) (ReasoningFormat, error) {
	switch f := ReasoningFormat(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return ReasoningAuto, nil
	case ReasoningAuto, ReasoningFields, ReasoningThink, ReasoningNone:
		return f, nil
	}
	return "", fmt.Errorf("reasoning format %q is not one of auto, fields, think, none", s)
}

var (
	thinkOpen  = []byte("<think>")
	thinkClose = []byte("</think>")
)

// noReasoning moves reasoning text to the content.
type noReasoning struct{ inner Decoder }

func (r *noReasoning) move(d Delta, err error, out *Output, nr int) (Delta, error) {
	if len(out.Reasoning) > nr {
		out.Text = append(out.Text, out.Reasoning[nr:]...)
		out.Reasoning = out.Reasoning[:nr]
		d.Content, d.Reasoning = true, false
	}
	return d, err
}

func (r *noReasoning) Event(typ, data []byte, out *Output) (Delta, error) {
	nr := len(out.Reasoning)
	d, err := r.inner.Event(typ, data, out)
	return r.move(d, err, out, nr)
}

func (r *noReasoning) Body(data []byte, out *Output) (Delta, error) {
	nr := len(out.Reasoning)
	d, err := r.inner.Body(data, out)
	return r.move(d, err, out, nr)
}

// Splitter states.
const (
	thinkStart   = iota // nothing but white space seen yet (auto decides here)
	thinkInside         // inside <think>: content is reasoning
	thinkOutside        // content is content (auto: for good)
)

// thinkSplitter moves <think>…</think> spans of the content to the
// reasoning, across events: a tag split between two events is held back
// until the next one completes (or denies) it.
type thinkSplitter struct {
	inner   Decoder
	always  bool
	state   int
	pending []byte // a possible tag prefix held from the last event
	scratch []byte
}

func (t *thinkSplitter) Event(typ, data []byte, out *Output) (Delta, error) {
	n, nr := len(out.Text), len(out.Reasoning)
	d, err := t.inner.Event(typ, data, out)
	if err != nil {
		return d, err
	}
	return t.split(d, out, n, nr, d.Done || d.Finished), nil
}

func (t *thinkSplitter) Body(data []byte, out *Output) (Delta, error) {
	n, nr := len(out.Text), len(out.Reasoning)
	d, err := t.inner.Body(data, out)
	if err != nil {
		return d, err
	}
	return t.split(d, out, n, nr, true), nil
}

// split re-routes the content appended since n. Once auto mode has seen
// content that does not open with <think>, it passes everything through
// untouched, so the common case costs a comparison.
func (t *thinkSplitter) split(d Delta, out *Output, n, nr int, final bool) Delta {
	if !t.always && t.state == thinkOutside {
		return d
	}
	if len(out.Text) == n && len(t.pending) == 0 {
		return d
	}
	if !t.always && t.state == thinkStart && len(t.pending) == 0 {
		// Decide without copying when the first visible byte settles it.
		if trimmed := bytes.TrimLeft(out.Text[n:], " \t\r\n"); len(trimmed) > 0 && trimmed[0] != '<' {
			t.state = thinkOutside
			return d
		}
	}
	t.scratch = append(append(t.scratch[:0], t.pending...), out.Text[n:]...)
	t.pending = t.pending[:0]
	out.Text = out.Text[:n]
	in := t.scratch
	for len(in) > 0 {
		switch t.state {
		case thinkStart:
			trimmed := bytes.TrimLeft(in, " \t\r\n")
			switch {
			case bytes.HasPrefix(trimmed, thinkOpen):
				t.state = thinkInside
				in = trimmed[len(thinkOpen):]
			case len(trimmed) == 0 || bytes.HasPrefix(thinkOpen, trimmed):
				// Only white space or the start of the tag so far.
				if final {
					out.Text = append(out.Text, in...)
				} else {
					t.pending = append(t.pending, in...)
				}
				in = nil
			default:
				t.state = thinkOutside
			}
		case thinkInside:
			if i := bytes.Index(in, thinkClose); i >= 0 {
				out.Reasoning = append(out.Reasoning, in[:i]...)
				in = in[i+len(thinkClose):]
				t.state = thinkOutside
				continue
			}
			keep := partialTag(in, thinkClose, final)
			out.Reasoning = append(out.Reasoning, in[:len(in)-keep]...)
			t.pending = append(t.pending, in[len(in)-keep:]...)
			in = nil
		case thinkOutside:
			if !t.always {
				out.Text = append(out.Text, in...)
				in = nil
				continue
			}
			if i := bytes.Index(in, thinkOpen); i >= 0 {
				out.Text = append(out.Text, in[:i]...)
				in = in[i+len(thinkOpen):]
				t.state = thinkInside
				continue
			}
			keep := partialTag(in, thinkOpen, final)
			out.Text = append(out.Text, in[:len(in)-keep]...)
			t.pending = append(t.pending, in[len(in)-keep:]...)
			in = nil
		}
	}
	d.Content = len(out.Text) > n
	d.Reasoning = d.Reasoning || len(out.Reasoning) > nr
	return d
}

// partialTag is how many bytes at the end of b could begin tag (0 on the
// final event, when nothing can complete it).
func partialTag(b, tag []byte, final bool) int {
	if final {
		return 0
	}
	for k := min(len(tag)-1, len(b)); k > 0; k-- {
		if bytes.HasSuffix(b, tag[:k]) {
			return k
		}
	}
	return 0
}
