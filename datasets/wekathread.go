package datasets

import (
	"fmt"
	"slices"
)

// threadWeka lays each WEKA turn's context out as the messages an agent
// sent, instead of one user message: a call whose context extends the
// call before it (that call's full prefix blocks come first) is sent as
// the earlier calls' messages, then an assistant message, then its own
// new blocks, as a role "tool" result of the assistant's tool call when
// the call before it stopped to use a tool (AfterToolUse), else as a
// user message. A call whose context does not extend the one before (a
// compaction, a reset) starts over with one user message.
//
// Every message but a turn's own is closed at a block boundary and is the
// same, byte for byte, in every later turn of the conversation, so a
// server's prefix cache sees the prefix the trace's hash ids describe;
// turns share those messages (Turn.Thread) rather than copy them, and
// each turn's own message holds only its new blocks, so a turn's tokens
// are its recorded input length, as before. The tool calls name
// RecordedTool, with empty arguments, and ids call_<turn>, as AIPerf's
// weka tool shaping does; every turn declares the tool.
//
// rows are the ones the dataset was built from (after fitBlocks), in
// order: mooncakeDataset put each row's turn in its session's
// conversation, in row order.
func threadWeka(d *Dataset, rows []MooncakeRow, bb *blockStats) {
	type state struct {
		turn int
		// closed are the messages later turns send before their own.
		closed []Message
		// ids and full are the previous call's blocks and how many of them
		// are whole; start is where its own message's blocks began; role
		// and id are its own message's.
		ids         []int64
		full, start int
		role, id    string
	}
	conv := make(map[string]int, len(d.Conversations))
	for i, c := range d.Conversations {
		conv[c.ID] = i
	}
	states := make([]state, len(d.Conversations))
	for i := range rows {
		r := &rows[i]
		ci, ok := conv[r.SessionID]
		if !ok || !r.generated() {
			continue
		}
		st := &states[ci]
		t := &d.Conversations[ci].Turns[st.turn]
		turn := st.turn
		st.turn++
		if t.Prompt == nil {
			continue // a row of text: sent as it is
		}
		src := t.Prompt.src
		ids := r.HashIDs
		full := r.InputLength / bb.size
		extends := st.ids != nil && st.full >= st.start && st.full >= 1 && len(ids) >= st.full &&
			slices.Equal(ids[:st.full], st.ids[:st.full])
		role, id := "user", ""
		if !extends {
			st.closed, st.start = nil, 0
		} else {
			closed := &Prompt{src: src, ids: st.ids[st.start:st.full], tokens: (st.full - st.start) * bb.size}
			st.closed = append(st.closed, Message{Role: st.role, ToolCallID: st.id, Parts: []string{closed.String()}})
			reply := Message{Role: "assistant"}
			if r.AfterToolUse {
				id = fmt.Sprintf("call_%d", turn)
				role = "tool"
				reply.ToolCalls = []ToolCall{{ID: id, Name: RecordedTool, Arguments: "{}"}}
			}
			st.closed = append(st.closed, reply)
			st.start = st.full
		}
		// Its own message: its new blocks, kept as blocks.
		t.Prompt = &Prompt{src: src, ids: ids[st.start:], tokens: r.InputLength - st.start*bb.size}
		if len(st.closed) > 0 {
			t.Thread = slices.Clip(st.closed)
		}
		t.Role, t.ToolCallID = role, id
		if role == "user" {
			t.Role = "" // a user message, as before
		}
		t.Tools = recordedToolDefs
		st.ids, st.full, st.role, st.id = ids, full, role, id
	}
}
