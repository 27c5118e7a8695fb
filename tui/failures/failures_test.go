package failures

import (
	"strings"
	"testing"
)

func TestUpdateView(t *testing.T) {
	var m Model
	m, _ = m.Update(Msg{Errors: map[string]int64{"b": 5, "a": 5, "c": 9, "zero": 0}, Finished: 100})
	if m.Types() != 3 {
		t.Fatalf("Types = %d, want 3 (zero counts dropped)", m.Types())
	}
	tests := []struct {
		height int
		want   []string
	}{
		{3, []string{"9   9.0%  c", "5   5.0%  a", "5   5.0%  b"}},
		{2, []string{"9   9.0%  c", "10  in 2 more types"}},
		{1, []string{"9  c  +10 in 2 more types"}},
	}
	for _, tt := range tests {
		lines := strings.Split(m.View(60, tt.height), "\n")
		if len(lines) != len(tt.want) {
			t.Fatalf("height %d: %d lines: %q", tt.height, len(lines), lines)
		}
		for i, w := range tt.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("height %d line %d = %q, want it to contain %q", tt.height, i, lines[i], w)
			}
		}
	}
	m, _ = m.Update(Msg{})
	if v := m.View(40, 3); !strings.Contains(v, "no errors") {
		t.Errorf("empty view %q", v)
	}
}

// TestServerErrorTypesShownEscaped: an error type is the server's own
// word; its terminal escapes are shown escaped, not obeyed.
func TestServerErrorTypesShownEscaped(t *testing.T) {
	var m Model
	m, _ = m.Update(Msg{Errors: map[string]int64{"HTTP 500 \x1b]0;title\x07\x1b[2J": 3}, Finished: 3})
	if v := m.View(80, 3); strings.ContainsAny(v, "\x07") || !strings.Contains(v, `\x1b]0;title\x07\x1b[2J`) {
		t.Errorf("view %q", v)
	}
}
