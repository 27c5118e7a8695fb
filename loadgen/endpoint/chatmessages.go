package endpoint

import "github.com/surgebench/surge/datasets"

// ChatMessages is the message list a chat-style request of turn sends:
// the system prompt, the history (unless the turn stands alone), then the
// turn's message or its dataset messages. A chat template renders this
// list on the server (AIPerf's --apply-chat-template counts it).
func ChatMessages(system string, history []Message, turn *datasets.Turn) []Message {
	return chatMessages(&Request{System: system, History: history, Turn: turn}, true)
}
