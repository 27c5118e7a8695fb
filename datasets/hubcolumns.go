package datasets

import (
	"fmt"
	"strings"
)

// Columns maps a Hub dataset's columns to what each request sends
// (--hf-column ROLE=COLUMN). Prompt or Messages must be set.
type Columns struct {
	// Prompt is the user text: a string, or a list of strings that are a
	// conversation's turns, one each.
	Prompt string
	// System is the system prompt.
	System string
	// OutputLen is the output cap in tokens (an integer or a numeric
	// string).
	OutputLen string
	// Image holds the turn's images: an image (bytes, {"bytes", "path"}
	// as the datasets library stores them, a URL or a data URL) or a list
	// of them.
	Image string
	// Audio holds the turn's clip: bytes or {"bytes", "path"} (WAV, MP3,
	// FLAC), or a data URL; or a list of them.
	Audio string
	// Messages is a chat: a list of {"role", "content"} (or ShareGPT's
	// {"from", "value"}) messages; each user message is a turn.
	Messages string
}

// ColumnRoles are the roles --hf-column maps, in the order messages list
// them.
var ColumnRoles = []string{"prompt", "system", "output_len", "image", "audio", "messages"}

// maxColumnName bounds a column name.
const maxColumnName = 256

// ParseColumns reads --hf-column values: ROLE=COLUMN, several to a value
// when separated by commas ("prompt=question,image=image"). Each role is
// given once; a column is a non-empty name without a comma.
func ParseColumns(specs []string) (Columns, error) {
	var c Columns
	seen := map[string]bool{}
	for _, spec := range specs {
		for item := range strings.SplitSeq(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			role, col, ok := strings.Cut(item, "=")
			role, col = strings.TrimSpace(role), strings.TrimSpace(col)
			if !ok {
				return Columns{}, fmt.Errorf("%q: want ROLE=COLUMN (roles: %s)", item, strings.Join(ColumnRoles, ", "))
			}
			if col == "" {
				return Columns{}, fmt.Errorf("%q: the column name is empty", item)
			}
			if len(col) > maxColumnName || strings.ContainsAny(col, "\x00\n") {
				return Columns{}, fmt.Errorf("%q: not a column name", truncate(item, 80))
			}
			if seen[role] {
				return Columns{}, fmt.Errorf("%q: %s is mapped twice", item, role)
			}
			seen[role] = true
			switch role {
			case "prompt":
				c.Prompt = col
			case "system":
				c.System = col
			case "output_len":
				c.OutputLen = col
			case "image":
				c.Image = col
			case "audio":
				c.Audio = col
			case "messages":
				c.Messages = col
			default:
				return Columns{}, fmt.Errorf("%q: unknown role %q (roles: %s)", truncate(item, 80), truncate(role, 40), strings.Join(ColumnRoles, ", "))
			}
		}
	}
	switch {
	case c.Prompt == "" && c.Messages == "":
		return Columns{}, fmt.Errorf("no prompt=COLUMN or messages=COLUMN: say which column holds what to send")
	case c.Prompt != "" && c.Messages != "":
		return Columns{}, fmt.Errorf("prompt=%s and messages=%s both give the user's text: map one", c.Prompt, c.Messages)
	}
	return c, nil
}

// String writes the mapping back as --hf-column takes it.
func (c Columns) String() string {
	var parts []string
	for i, col := range []string{c.Prompt, c.System, c.OutputLen, c.Image, c.Audio, c.Messages} {
		if col != "" {
			parts = append(parts, ColumnRoles[i]+"="+col)
		}
	}
	return strings.Join(parts, ",")
}

// names are the columns the mapping reads.
func (c Columns) names() []string {
	var out []string
	for _, col := range []string{c.Prompt, c.System, c.OutputLen, c.Image, c.Audio, c.Messages} {
		if col != "" {
			out = append(out, col)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
