package metrics

// ChatMessage is one message of a chat request, as a chat template sees it.
type ChatMessage struct {
	Role, Content string
}

// ChatCounter is a TokenCounter that also counts a chat request's prompt
// as the model's chat template renders it (AIPerf's
// --apply-chat-template: apply_chat_template(tokenize=True,
// add_generation_prompt=True)). It must be safe for concurrent use.
type ChatCounter interface {
	TokenCounter
	CountChat(msgs []ChatMessage) (int, error)
}

// chatLength is r's templated prompt length, counted once per record;
// ok is false when r carries no messages or tok cannot count them. A
// template that fails on these messages leaves the length unknown (NaN
// ISL, or the server's usage), never the bare text's count.
func chatLength(r *Record, tok TokenCounter) (n float64, ok bool) {
	cc, is := tok.(ChatCounter)
	if r.Chat == nil || !is {
		return 0, false
	}
	if r.chatTokens == 0 {
		r.chatTokens = -1
		if c, err := cc.CountChat(r.Chat); err == nil && c > 0 {
			r.chatTokens = c
		}
	}
	return float64(r.chatTokens), true
}
