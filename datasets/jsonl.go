package datasets

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/surgebench/surge/datasets/media"
)

// turnJSON is one turn in AIPerf's single_turn / multi_turn / random_pool
// JSONL formats.
type turnJSON struct {
	Text         *string         `json:"text"`
	Texts        json.RawMessage `json:"texts"`
	Timestamp    *float64        `json:"timestamp"`
	Delay        *float64        `json:"delay"`
	OutputLength *int            `json:"output_length"`
	Extra        map[string]any  `json:"extra"`
	Role         string          `json:"role"`
	Image        json.RawMessage `json:"image"`
	Images       json.RawMessage `json:"images"`
	Audio        json.RawMessage `json:"audio"`
	Audios       json.RawMessage `json:"audios"`
	SessionID    *string         `json:"session_id"`
	Turns        []turnJSON      `json:"turns"`
	// Messages and Tools are OpenAI's chat-file form (as its fine-tuning
	// files have it): the messages sent as given, tool calls and tool
	// results included, with the functions the model may call.
	Messages          []map[string]any `json:"messages"`
	Tools             []map[string]any `json:"tools"`
	ParallelToolCalls *bool            `json:"parallel_tool_calls"`
}

// namedTexts is AIPerf's Text object in "texts": a named group of
// contents.
type namedTexts struct {
	Name     string   `json:"name"`
	Contents []string `json:"contents"`
}

// parseTexts reads "texts": a list of strings, or of AIPerf's {name,
// contents} groups. The contents are sent as one message, one a line; a
// group named "passages" holds a rankings request's passages instead (and
// "query" its query, like any other name).
func parseTexts(raw json.RawMessage) (text string, passages []string, err error) {
	var plain []string
	if json.Unmarshal(raw, &plain) == nil {
		if len(plain) == 0 {
			return "", nil, errors.New(`"texts" is empty`)
		}
		return strings.Join(plain, "\n"), nil, nil
	}
	var groups []namedTexts
	if err := json.Unmarshal(raw, &groups); err != nil {
		return "", nil, errors.New(`"texts" must be a list of strings or of {"name", "contents"} objects`)
	}
	var lines []string
	for _, g := range groups {
		if g.Name == "passages" {
			passages = append(passages, g.Contents...)
			continue
		}
		lines = append(lines, g.Contents...)
	}
	if len(lines) == 0 {
		return "", nil, errors.New(`"texts" has no contents (besides passages)`)
	}
	return strings.Join(lines, "\n"), passages, nil
}

// mediaRefs reads "image"/"images" (or "audio"/"audios") as AIPerf's
// loaders do: one string, or a list of strings or of {"name", "contents"}
// groups; a JSON null is absent.
func mediaRefs(one, many json.RawMessage, field string) ([]string, error) {
	isNull := func(r json.RawMessage) bool { return r == nil || string(r) == "null" }
	switch {
	case !isNull(one) && !isNull(many):
		return nil, fmt.Errorf("give %q or %q, not both", field, field+"s")
	case !isNull(one):
		var s string
		if json.Unmarshal(one, &s) != nil {
			return nil, fmt.Errorf("%q must be a string (a path or a URL)", field)
		}
		return []string{s}, nil
	case isNull(many):
		return nil, nil
	}
	var plain []string
	if json.Unmarshal(many, &plain) == nil {
		return plain, nil
	}
	var groups []namedTexts
	if err := json.Unmarshal(many, &groups); err != nil {
		return nil, fmt.Errorf("%q must be a list of strings or of {\"name\", \"contents\"} objects", field+"s")
	}
	var refs []string
	for _, g := range groups {
		refs = append(refs, g.Contents...)
	}
	return refs, nil
}

// turnMedia resolves a turn's images and audio through files.
func (j *turnJSON) turnMedia(files *media.Files) ([]media.Part, error) {
	var parts []media.Part
	for _, m := range []struct {
		one, many json.RawMessage
		field     string
		get       func(string) (media.Part, error)
	}{{j.Image, j.Images, "image", files.Image}, {j.Audio, j.Audios, "audio", files.Audio}} {
		refs, err := mediaRefs(m.one, m.many, m.field)
		if err != nil {
			return nil, err
		}
		for _, ref := range refs {
			p, err := m.get(ref)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", m.field, err)
			}
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// toTurn validates a turn; where names it in messages ("" or "turns[2]: ").
// Its media are resolved through files (each file read once).
func (j *turnJSON) toTurn(file string, line int, where string, files *media.Files) (Turn, error) {
	var t Turn
	var err error
	if t.Media, err = j.turnMedia(files); err != nil {
		return t, inputErrorf(file, line, "%s%v", where, err)
	}
	switch {
	case j.Messages != nil:
		switch {
		case j.Text != nil || j.Texts != nil:
			return t, inputErrorf(file, line, `%s"messages" excludes "text" and "texts" (the messages carry the content)`, where)
		case len(t.Media) > 0:
			return t, inputErrorf(file, line, `%s"messages" excludes "image" and "audio": give them as the messages' content parts`, where)
		}
		if err := checkMessages(j.Messages); err != nil {
			return t, inputErrorf(file, line, "%s%v", where, err)
		}
		t.Messages = j.Messages
	case j.Text == nil && j.Texts == nil && len(t.Media) > 0:
		// An image or audio turn without text, as AIPerf allows.
	case j.Text != nil && j.Texts != nil:
		return t, inputErrorf(file, line, `%sgive "text" or "texts", not both`, where)
	case j.Text != nil:
		t.Text = *j.Text
	case j.Texts != nil:
		var err error
		if t.Text, t.Passages, err = parseTexts(j.Texts); err != nil {
			return t, inputErrorf(file, line, "%s%v", where, err)
		}
	default:
		return t, inputErrorf(file, line, `%smissing required field "text" (or "texts", or "messages")`, where)
	}
	if j.Tools != nil {
		if err := checkTools(j.Tools); err != nil {
			return t, inputErrorf(file, line, "%s%v", where, err)
		}
		t.Tools = j.Tools
	}
	if j.Timestamp != nil && j.Delay != nil {
		return t, inputErrorf(file, line, `%sgive "timestamp" or "delay", not both`, where)
	}
	if j.Timestamp != nil {
		if msg := checkMillis(*j.Timestamp); msg != "" {
			return t, inputErrorf(file, line, "%stimestamp %v: %s", where, *j.Timestamp, msg)
		}
		t.Timestamp, t.HasTimestamp = millis(*j.Timestamp), true
	}
	if j.Delay != nil {
		if msg := checkMillis(*j.Delay); msg != "" {
			return t, inputErrorf(file, line, "%sdelay %v: %s", where, *j.Delay, msg)
		}
		t.Delay = millis(*j.Delay)
	}
	if j.OutputLength != nil {
		if *j.OutputLength < 0 {
			return t, inputErrorf(file, line, "%soutput_length must not be negative, got %d", where, *j.OutputLength)
		}
		if err := tokensInput(file, line, where+"output_length", *j.OutputLength); err != nil {
			return t, err
		}
		t.MaxTokens = *j.OutputLength
	}
	if len(j.Extra) > 0 {
		t.Extra = j.Extra
	}
	if j.ParallelToolCalls != nil {
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		if _, ok := t.Extra["parallel_tool_calls"]; !ok {
			t.Extra["parallel_tool_calls"] = *j.ParallelToolCalls
		}
	}
	t.Role = j.Role
	return t, nil
}

// ParseSingleTurnLine parses one line of a single_turn (or random_pool)
// JSONL file into a turn.
func ParseSingleTurnLine(file string, line int, b []byte) (Turn, error) {
	return parseSingleTurn(file, line, b, nil, media.Inline())
}

// parseSingleTurn is ParseSingleTurnLine that also returns the line's
// session_id through sid (nil when it has none), unless sid is nil, and
// reads media files through files.
func parseSingleTurn(file string, line int, b []byte, sid **string, files *media.Files) (Turn, error) {
	var j turnJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Turn{}, jsonLineError(file, line, err)
	}
	if j.Turns != nil {
		return Turn{}, inputErrorf(file, line, `"turns" belongs in a multi_turn file (--custom-dataset-type multi_turn)`)
	}
	if sid != nil {
		if j.SessionID != nil && *j.SessionID == "" {
			return Turn{}, inputErrorf(file, line, "session_id is empty")
		}
		*sid = j.SessionID
	}
	return j.toTurn(file, line, "", files)
}

// ParseMultiTurnLine parses one line of a multi_turn JSONL file:
// {"session_id": "...", "turns": [{"text": ..., "delay": ...}, ...]}.
// Media must be URLs or inline data: only a dataset load reads files.
func ParseMultiTurnLine(file string, line int, b []byte) (Conversation, error) {
	return parseMultiTurn(file, line, b, media.Inline())
}

// parseMultiTurn is ParseMultiTurnLine reading media files through files.
func parseMultiTurn(file string, line int, b []byte, files *media.Files) (Conversation, error) {
	var j turnJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Conversation{}, jsonLineError(file, line, err)
	}
	if j.Turns == nil {
		return Conversation{}, inputErrorf(file, line, `missing required field "turns"`)
	}
	if len(j.Turns) == 0 {
		return Conversation{}, inputErrorf(file, line, `"turns" is empty`)
	}
	c := Conversation{Turns: make([]Turn, len(j.Turns))}
	if j.SessionID != nil {
		c.ID = *j.SessionID
	}
	for i := range j.Turns {
		if j.Turns[i].Turns != nil {
			return Conversation{}, inputErrorf(file, line, "turns[%d]: turns do not nest", i)
		}
		t, err := j.Turns[i].toTurn(file, line, fmt.Sprintf("turns[%d]: ", i), files)
		if err != nil {
			return Conversation{}, err
		}
		c.Turns[i] = t
	}
	return c, nil
}

// eachLine calls fn for every non-blank line.
func eachLine(r io.Reader, file string, fn func(line int, b []byte) error) error {
	n, err := newLineReader(r, file).each(fn)
	if err != nil {
		return err
	}
	if n == 0 {
		return inputErrorf(file, 0, "no rows")
	}
	return nil
}

// readSingleTurn reads a single_turn file: one conversation per line, but
// lines sharing a session_id are the turns of one conversation, in file
// order (as AIPerf groups them); conversations keep the order of their
// first lines.
func readSingleTurn(r io.Reader, file string) (*Dataset, error) {
	d := &Dataset{Name: file}
	sessions := map[string]int{}
	files := media.NewFiles(0)
	err := eachLine(r, file, func(line int, b []byte) error {
		var sid *string
		t, err := parseSingleTurn(file, line, b, &sid, files)
		if err != nil {
			return err
		}
		if sid == nil {
			d.Conversations = append(d.Conversations, Conversation{ID: fmt.Sprintf("line-%d", line), Turns: []Turn{t}})
			return nil
		}
		if ci, ok := sessions[*sid]; ok {
			d.Conversations[ci].Turns = append(d.Conversations[ci].Turns, t)
			return nil
		}
		sessions[*sid] = len(d.Conversations)
		d.Conversations = append(d.Conversations, Conversation{ID: *sid, Turns: []Turn{t}})
		return nil
	})
	return d, err
}

// readMultiTurn reads a multi_turn file: one conversation per line. Lines
// sharing a session_id are an error: a conversation is one line.
func readMultiTurn(r io.Reader, file string) (*Dataset, error) {
	d := &Dataset{Name: file}
	seen := map[string]int{}
	files := media.NewFiles(0)
	err := eachLine(r, file, func(line int, b []byte) error {
		c, err := parseMultiTurn(file, line, b, files)
		if err != nil {
			return err
		}
		if c.ID == "" {
			c.ID = fmt.Sprintf("line-%d", line)
		} else if first, dup := seen[c.ID]; dup {
			return inputErrorf(file, line, "session_id %q already used on line %d", c.ID, first)
		}
		seen[c.ID] = line
		d.Conversations = append(d.Conversations, c)
		return nil
	})
	return d, err
}

// readRandomPool reads a random_pool file (single-turn entries) and draws
// count conversations from it uniformly at random with replacement, seeded;
// count ≤ 0 takes each entry once, in file order. Drawn conversations
// share their turns with the pool.
func readRandomPool(r io.Reader, file string, count int, seed uint64, onDemand bool) (*Dataset, int, error) {
	var pool []Turn
	files := media.NewFiles(0)
	err := eachLine(r, file, func(line int, b []byte) error {
		t, err := parseSingleTurn(file, line, b, nil, files)
		if err != nil {
			return err
		}
		if t.HasTimestamp {
			return inputErrorf(file, line, "random_pool entries are drawn at random and cannot carry a timestamp")
		}
		pool = append(pool, t)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	src := &poolSource{pool: pool, n: count, seed: seed, drawn: count > 0 || onDemand}
	switch {
	case onDemand && count == 0:
		src.n = OnDemandLen
	case !src.drawn:
		src.n = len(pool)
	case count > MaxHeldConversations && !onDemand:
		return nil, 0, optionErrorf("Synthetic.Count", "%d random_pool draws are over the %d conversations held in memory: draw them as they are sent (on demand)", count, MaxHeldConversations)
	}
	if onDemand {
		return &Dataset{Name: file, Source: src}, len(pool), nil
	}
	d := &Dataset{Name: file, Conversations: make([]Conversation, src.n)}
	for i := range d.Conversations {
		d.Conversations[i] = Conversation{ID: fmt.Sprintf("pool-%d", i), Turns: src.turns(i)}
	}
	return d, len(pool), nil
}

// poolSource is a random pool's draws: conversation i is one of the pool's
// entries drawn at random (by the seed and i), or entry i when the pool is
// taken as it is.
type poolSource struct {
	pool  []Turn
	n     int
	seed  uint64
	drawn bool
}

// turns is draw i: a one-turn slice of the pool.
func (s *poolSource) turns(i int) []Turn {
	k := i
	if s.drawn {
		k = int(mix64(s.seed^mix64(uint64(i)^0x9001)) % uint64(len(s.pool)))
	}
	return s.pool[k : k+1 : k+1]
}

// Len is the number of draws.
func (s *poolSource) Len() int { return s.n }

// Turns is 1: every draw is one entry.
func (s *poolSource) Turns(int) int { return 1 }

// UniformTurns is 1.
func (s *poolSource) UniformTurns() int { return 1 }

// Conversation is draw i.
func (s *poolSource) Conversation(i int) *Conversation {
	// A one-turn conversation's delay is never waited (it comes before a
	// later turn): a turn delay ratio changes nothing here.
	return &Conversation{ID: "pool-" + strconv.Itoa(i), Turns: s.turns(i)}
}
