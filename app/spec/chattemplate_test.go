package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// TestApplyChatTemplateFlag: --apply-chat-template reaches the spec and
// input_config at AIPerf's path, and is refused for endpoint types that
// send no chat messages.
func TestApplyChatTemplateFlag(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, kind := range []string{"chat", "responses", "messages"} {
		s, err := parseArgs(t, "--endpoint-type", kind, "--apply-chat-template")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !s.Tokenizer.ApplyChatTemplate {
			t.Errorf("%s: ApplyChatTemplate not set", kind)
		}
		if v, ok := cmdline.PathValue(s.InputConfig(), "tokenizer.apply_chat_template"); !ok || v != true {
			t.Errorf("%s: input_config tokenizer.apply_chat_template = %v", kind, v)
		}
	}
	s, err := parseArgs(t)
	if err != nil || s.Tokenizer.ApplyChatTemplate {
		t.Errorf("by default: %v, ApplyChatTemplate %v", err, s != nil && s.Tokenizer.ApplyChatTemplate)
	}
	for _, kind := range []string{"completions", "embeddings", "nim_rankings"} {
		_, err := parseArgs(t, "--endpoint-type", kind, "--apply-chat-template")
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--apply-chat-template") || !strings.Contains(err.Error(), kind) {
			t.Errorf("%s: err = %v, want a usage error naming the flag and the type", kind, err)
		}
	}
}
