package datasets

import (
	"context"
	"strconv"
	"time"
	"unsafe"
)

// traceStore is a Mooncake trace's rows kept compact, its conversations
// built when they are asked for (Options.OnDemand, a Source): a row of
// lengths and hash ids costs a traceRow and 8 bytes an id, where a held
// turn costs some 500 bytes, so a trace of a million rows holds tens of
// megabytes, not hundreds. Rows that carry more than lengths (a text,
// messages, a payload, extra fields) keep their turn whole.
type traceStore struct {
	src  *blockSource
	rows []traceRow
	ids  []int64 // the rows' hash ids, one row's after another
	rich []Turn  // the turns of rows that carry more than lengths
	// base numbers the blocks of prompts without hash ids, after the
	// trace's largest id (known once every row was read).
	base int64
	// conv is each row's conversation while reading; finish turns it into
	// start and order: conversation c's rows are order[start[c]:start[c+1]]
	// (both nil: a conversation a row, in file order).
	conv         []int32
	start, order []int32
	sessions     map[string]int32 // while reading
	names        map[int32]string // the conversations that are sessions
	convs        int32
	uniform      int
	allStamped   bool
}

// traceRow is one row: its timing, lengths and blocks.
type traceRow struct {
	ts, delay time.Duration
	in, out   int32
	line      int32
	nids      int32 // its hash ids: ids[at:at+nids]; 0: blocks of its own from base+at
	at        int64
	rich      int32 // its turn in rich, or -1
	stamped   bool
}

// traceRowBytes is what a row costs held (its index in order too).
const traceRowBytes = int64(unsafe.Sizeof(traceRow{})) + 8

func newTraceStore(src *blockSource) *traceStore {
	return &traceStore{src: src, sessions: map[string]int32{}, names: map[int32]string{}, allStamped: true}
}

// add keeps row r, numbering the blocks of a prompt of its own from
// *fresh (advanced past them).
func (s *traceStore) add(r *MooncakeRow, fresh *int64) {
	row := traceRow{line: int32(r.Line), rich: -1, stamped: r.HasTimestamp, in: int32(r.InputLength), out: int32(r.OutputLength)}
	if r.HasTimestamp {
		row.ts = millis(r.Timestamp)
	}
	if r.HasDelay {
		row.delay = millis(r.Delay)
	}
	switch {
	case !r.generated() || r.Extra != nil:
		// Kept whole; a generated prompt still goes by its blocks.
		t := Turn{InputTokens: r.InputLength, MaxTokens: r.OutputLength, Extra: r.Extra, Text: r.Text,
			Messages: r.Messages, MessagesDelta: r.Delta, Tools: r.Tools, Payload: r.Payload}
		if r.generated() {
			t.Prompt = s.prompt(r, fresh)
		}
		row.rich = int32(len(s.rich))
		s.rich = append(s.rich, t)
	case len(r.HashIDs) > 0:
		row.at, row.nids = int64(len(s.ids)), int32(len(r.HashIDs))
		s.ids = append(s.ids, r.HashIDs...)
	default:
		row.at = *fresh
		*fresh += int64(blocksOf(r.InputLength, s.src.size))
	}
	c, ok := s.sessions[r.SessionID]
	if r.SessionID == "" || !ok {
		c = s.convs
		s.convs++
		if r.SessionID != "" {
			s.sessions[r.SessionID], s.names[c] = c, r.SessionID
		} else if !r.HasTimestamp {
			s.allStamped = false
		}
	}
	s.rows = append(s.rows, row)
	s.conv = append(s.conv, c)
}

// prompt is a rich row's generated prompt (held, like a held trace's).
func (s *traceStore) prompt(r *MooncakeRow, fresh *int64) *Prompt {
	pr := &Prompt{src: s.src, tokens: r.InputLength, ids: r.HashIDs}
	if len(r.HashIDs) == 0 {
		pr.ids, pr.first = nil, *fresh
		*fresh += int64(pr.blocks())
	}
	return pr
}

// blocksOf is how many blocks of size tokens hold n.
func blocksOf(n, size int) int {
	if size <= 0 || n <= 0 {
		return 1
	}
	return (n + size - 1) / size
}

// finish groups the rows by conversation, numbers the prompts' own blocks
// from base and counts what the report says.
func (s *traceStore) finish(ctx context.Context, base int64, st *blockStats) error {
	s.base = base
	for i := range s.rich {
		if pr := s.rich[i].Prompt; pr != nil && pr.ids == nil {
			pr.first += base
		}
	}
	if len(s.names) == 0 {
		s.conv, s.sessions, s.names = nil, nil, nil
		s.uniform = 1
	} else {
		s.start = make([]int32, s.convs+1)
		for _, c := range s.conv {
			s.start[c+1]++
		}
		for c := range s.convs {
			s.start[c+1] += s.start[c]
		}
		s.order = make([]int32, len(s.rows))
		next := append([]int32(nil), s.start[:s.convs]...)
		for r, c := range s.conv {
			s.order[next[c]] = int32(r)
			next[c]++
		}
		s.conv, s.sessions = nil, nil
		for c := range s.convs {
			if !s.rows[s.order[s.start[c]]].stamped {
				s.allStamped = false
			}
		}
	}
	st.blocks, st.short = 0, 0
	for r := range s.rows {
		if err := canceled(ctx, r, "trace"); err != nil {
			return err
		}
		if pr := s.rowPrompt(int32(r)); pr != nil {
			st.blocks += pr.blocks()
			st.short += pr.short()
		}
	}
	return nil
}

// rowPrompt is row r's generated prompt (nil for a text, messages or a
// payload).
func (s *traceStore) rowPrompt(r int32) *Prompt {
	row := &s.rows[r]
	if row.rich >= 0 {
		return s.rich[row.rich].Prompt
	}
	pr := &Prompt{src: s.src, tokens: int(row.in)}
	if row.nids > 0 {
		pr.ids = s.ids[row.at : row.at+int64(row.nids) : row.at+int64(row.nids)]
	} else {
		pr.first = s.base + row.at
	}
	return pr
}

// rowsOf is conversation c's rows.
func (s *traceStore) rowsOf(c int) []int32 {
	if s.order == nil {
		return nil
	}
	return s.order[s.start[c]:s.start[c+1]]
}

// Len is the number of conversations.
func (s *traceStore) Len() int { return int(s.convs) }

// Turns is conversation c's number of rows.
func (s *traceStore) Turns(c int) int {
	if s.order == nil {
		return 1
	}
	return int(s.start[c+1] - s.start[c])
}

// UniformTurns is 1 for a trace without sessions.
func (s *traceStore) UniformTurns() int { return s.uniform }

// Conversation builds conversation c.
func (s *traceStore) Conversation(c int) *Conversation {
	rows := s.rowsOf(c)
	if rows == nil {
		r := int32(c)
		return &Conversation{ID: "trace-" + strconv.Itoa(int(s.rows[r].line)), Turns: []Turn{s.turn(r)}}
	}
	id, ok := s.names[int32(c)]
	if !ok {
		id = "trace-" + strconv.Itoa(int(s.rows[rows[0]].line))
	}
	conv := &Conversation{ID: id, Turns: make([]Turn, len(rows))}
	for k, r := range rows {
		conv.Turns[k] = s.turn(r)
	}
	return conv
}

// turn builds row r's turn.
func (s *traceStore) turn(r int32) Turn {
	row := &s.rows[r]
	var t Turn
	if row.rich >= 0 {
		t = s.rich[row.rich]
	} else {
		t = Turn{InputTokens: int(row.in), MaxTokens: int(row.out), Prompt: s.rowPrompt(r)}
	}
	t.Timestamp, t.HasTimestamp, t.Delay = row.ts, row.stamped, row.delay
	return t
}

// Timestamp is conversation c's first turn's trace timestamp.
func (s *traceStore) Timestamp(c int) (time.Duration, bool) {
	r := int32(c)
	if s.order != nil {
		r = s.order[s.start[c]]
	}
	return s.rows[r].ts, s.rows[r].stamped
}

// HasTimestamps reports whether every conversation's first turn has one.
func (s *traceStore) HasTimestamps() bool { return s.convs > 0 && s.allStamped }
