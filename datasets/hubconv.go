package datasets

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/surgebench/surge/datasets/hf"
	"github.com/surgebench/surge/datasets/media"
)

// hubConv turns a Hub dataset's rows into conversations, as its kind says.
type hubConv struct {
	d       PublicDataset
	filters [][2]string // column filters (--hf-dataset)
	ex      exgenticFilter
	tok     Tokenizer // counts chat replies for their caps; nil: none
	files   *media.Files
	st      hubStats
	checked bool
	stopped bool
	lines   []string
	traces  []*WekaTrace
}

// newHubConv checks the filters for the dataset's kind.
func newHubConv(d PublicDataset, filters []string, tok Tokenizer) (*hubConv, error) {
	c := &hubConv{d: d, files: media.Inline()}
	if len(filters) > maxFilters {
		return nil, optionErrorf("HF.Filters", "%d filters, more than the %d allowed", len(filters), maxFilters)
	}
	var kv [][2]string
	for _, f := range filters {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, optionErrorf("HF.Filters", "%q: want KEY=VALUE", truncate(f, 80))
		}
		kv = append(kv, [2]string{k, strings.TrimSpace(v)})
	}
	switch {
	case d.kind == hubExgentic:
		var err error
		if c.ex, err = parseExgenticFilter(kv, d.exV2); err != nil {
			return nil, &OptionError{Option: "HF.Filters", Reason: err.Error(), Err: err}
		}
	case d.Name == TypeHF:
		c.filters = kv
	case len(kv) > 0:
		return nil, optionErrorf("HF.Filters", "%s takes no dataset filters (AIPerf's exgentic does; --hf-dataset filters rows by column)", d.Name)
	}
	if d.kind == hubColumns && d.columns.Messages != "" || d.kind == hubFirstMessage {
		// A chat's replies cap its turns; the tokenizer counts them.
		c.tok = tok
	}
	return c, nil
}

// columnsFor is the Parquet columns to decode (nil: all).
func (c *hubConv) columnsFor(plan *hf.Plan) []string {
	if c.d.kind != hubColumns && c.d.kind != hubFirstMessage && c.d.kind != hubASR {
		return nil
	}
	cols := c.d.columns.names()
	if c.d.template != "" {
		cols = templateFields(c.d.template)
	}
	for _, f := range c.filters {
		cols = append(cols, f[0])
	}
	return cols
}

// done reports whether the conversations built are enough.
func (c *hubConv) done(have, want int) bool {
	if c.d.kind == hubWeka {
		c.stopped = len(c.traces) >= want
	} else {
		c.stopped = have >= want
	}
	return c.stopped
}

// emptyFix is the fix when no row gave a conversation.
func (c *hubConv) emptyFix() string {
	switch {
	case c.st.filtered > 0 && c.st.filtered == c.st.rows:
		return "no row matched the dataset filters: check their values"
	case c.st.firstSkip != "":
		return "the first row skipped: " + c.st.firstSkip
	}
	return "pick another split or subset"
}

// row turns one row into its conversations (none when it is skipped).
func (c *hubConv) row(file string, n int, r hf.Row) ([]Conversation, error) {
	bad := func(format string, args ...any) error {
		return &hf.Error{File: file, Row: n, Msg: fmt.Sprintf(format, args...)}
	}
	if !c.checked {
		c.checked = true
		if err := c.checkColumns(file, r); err != nil {
			return nil, err
		}
	}
	for _, f := range c.filters {
		if v, ok := scalarText(r[f[0]]); !ok || v != f[1] {
			c.st.filtered++
			return nil, nil
		}
	}
	id := fmt.Sprintf("%s#%d", file, n)
	switch c.d.kind {
	case hubExgentic:
		return c.exgenticRow(file, n, r)
	case hubWeka:
		t, err := wekaRow(file, n, r)
		if err != nil {
			return nil, err
		}
		c.traces = append(c.traces, t)
		c.st.kept++
		return nil, nil
	case hubASR:
		v := r[c.d.columns.Audio]
		if isEmpty(v) {
			c.st.skip("no audio", "")
			return nil, nil
		}
		parts, err := c.audio(v)
		if err != nil {
			c.st.skip("audio surge cannot send", err.Error())
			return nil, nil
		}
		secs := 0.0
		for _, p := range parts {
			secs += p.Seconds
		}
		if secs > asrMaxSeconds {
			c.st.skip("longer than 30 s", "")
			return nil, nil
		}
		c.st.kept++
		return []Conversation{{ID: id, Turns: []Turn{{Text: asrPrompt, Media: parts}}}}, nil
	case hubFirstMessage:
		msgs, err := chatMessages(r[c.d.columns.Messages], c.d.contentKey)
		if err != nil {
			return nil, bad("column %q: %v", c.d.columns.Messages, err)
		}
		text := firstUserText(msgs)
		if text == "" {
			c.st.skip("no user message", "")
			return nil, nil
		}
		t := Turn{Text: text}
		if c.d.columns.Image != "" {
			t.Media = firstImage(r[c.d.columns.Image], c.files)
		}
		c.st.kept++
		return []Conversation{{ID: id, Turns: []Turn{t}}}, nil
	}
	// hubColumns.
	cols := c.d.columns
	conv := Conversation{ID: id}
	switch {
	case c.d.template != "":
		text, err := formatTemplate(c.d.template, r)
		if err != nil {
			return nil, bad("%v", err)
		}
		conv.Turns = []Turn{{Text: text}}
	case cols.Prompt != "":
		texts, err := promptTexts(r[cols.Prompt])
		if err != nil {
			return nil, bad("column %q: %v", cols.Prompt, err)
		}
		for _, s := range texts {
			conv.Turns = append(conv.Turns, Turn{Text: s})
		}
	default:
		msgs, err := chatMessages(r[cols.Messages], "")
		if err != nil {
			return nil, bad("column %q: %v", cols.Messages, err)
		}
		conv.Turns, conv.SystemPrompt = c.chatTurns(msgs, cols.OutputLen != "")
	}
	if len(conv.Turns) == 0 {
		c.st.skip("empty prompt", "")
		return nil, nil
	}
	if cols.System != "" {
		s, ok := scalarText(r[cols.System])
		if !ok && !isEmpty(r[cols.System]) {
			return nil, bad("column %q holds %s, not text", cols.System, kindOf(r[cols.System]))
		}
		if strings.TrimSpace(s) != "" {
			conv.SystemPrompt = s
		}
	}
	if cols.OutputLen != "" {
		osl, ok, err := intValue(r[cols.OutputLen])
		if err != nil {
			return nil, bad("column %q: %v", cols.OutputLen, err)
		}
		if ok {
			if err := checkTokens(cols.OutputLen, osl); err != nil {
				return nil, bad("%v", err)
			}
			for i := range conv.Turns {
				conv.Turns[i].MaxTokens = osl
			}
		}
	}
	if cols.Image != "" && !isEmpty(r[cols.Image]) {
		parts, err := imageParts(r[cols.Image], c.files)
		if err != nil {
			return nil, bad("column %q: %v", cols.Image, err)
		}
		conv.Turns[0].Media = append(conv.Turns[0].Media, parts...)
	}
	if cols.Audio != "" && !isEmpty(r[cols.Audio]) {
		parts, err := c.audio(r[cols.Audio])
		if err != nil {
			return nil, bad("column %q: %v", cols.Audio, err)
		}
		conv.Turns[0].Media = append(conv.Turns[0].Media, parts...)
	}
	c.st.kept++
	return []Conversation{conv}, nil
}

// checkColumns checks the first row has the columns the mapping reads.
func (c *hubConv) checkColumns(file string, r hf.Row) error {
	var need []string
	switch c.d.kind {
	case hubColumns, hubFirstMessage, hubASR:
		need = c.d.columns.names()
		if c.d.template != "" {
			need = templateFields(c.d.template)
		}
	case hubExgentic:
		need = []string{"harness", "session_id", "models", "spans"}
	}
	for _, f := range c.filters {
		need = append(need, f[0])
	}
	var missing []string
	for _, col := range need {
		if _, ok := r[col]; !ok {
			missing = append(missing, strconv.Quote(col))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	have := make([]string, 0, len(r))
	for k := range r {
		have = append(have, k)
	}
	sort.Strings(have)
	fix := "its columns are " + strings.Join(have, ", ")
	if c.d.Name == TypeHF {
		fix += "; map them with --hf-column ROLE=COLUMN"
	}
	return &hf.Error{File: file, Msg: "no column " + strings.Join(missing, ", "), Fix: fix}
}

// finish builds what needs every row (WEKA traces).
func (c *hubConv) finish(ctx context.Context, o Options, d *Dataset, repo string) error {
	if c.d.kind != hubWeka || len(c.traces) == 0 {
		return nil
	}
	for _, t := range c.traces[1:] {
		if t.BlockSize != c.traces[0].BlockSize {
			return &hf.Error{Dataset: repo, File: t.File, Msg: fmt.Sprintf("block_size %d differs from %s's %d", t.BlockSize, c.traces[0].File, c.traces[0].BlockSize),
				Fix: "read traces of one block size together"}
		}
	}
	wd, _, line, err := wekaDataset(ctx, o, "hf://datasets/"+repo, c.traces)
	if err != nil {
		return err
	}
	d.Conversations = wd.Conversations
	c.lines = append(c.lines, line...)
	return nil
}

// audio resolves a column's clips.
func (c *hubConv) audio(v any) ([]media.Part, error) {
	var out []media.Part
	for _, x := range asList(v) {
		if isEmpty(x) {
			continue
		}
		p, err := audioPart(x, c.files)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no clip")
	}
	return out, nil
}

// chatMsg is one message of a chat column.
type chatMsg struct{ role, text string }

// chatMessages reads a chat column: a list of {"role", "content"} or
// ShareGPT's {"from", "value"} messages (contentKey, when set, names the
// text's key), each possibly wrapped in a list of its own (VisionArena);
// a JSON string holding such a list is read too.
func chatMessages(v any, contentKey string) ([]chatMsg, error) {
	if s, ok := v.(string); ok {
		var x any
		if err := json.Unmarshal([]byte(s), &x); err != nil {
			return nil, fmt.Errorf("a string that is not a JSON list of messages")
		}
		v = x
	}
	if isEmpty(v) {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("holds %s, not a list of messages", kindOf(v))
	}
	var out []chatMsg
	for _, item := range list {
		if inner, ok := item.([]any); ok && len(inner) > 0 {
			item = inner[0]
		}
		m, ok := item.(map[string]any)
		if !ok || len(m) == 0 {
			continue
		}
		role, _ := m["role"].(string)
		if role == "" {
			role, _ = m["from"].(string)
		}
		switch strings.ToLower(role) {
		case "human", "user":
			role = "user"
		case "gpt", "assistant", "bot", "model", "chatgpt":
			role = "assistant"
		case "system":
			role = "system"
		default:
			role = strings.ToLower(role)
		}
		var content any
		for _, k := range []string{contentKey, "content", "value", "text"} {
			if k == "" {
				continue
			}
			if x, ok := m[k]; ok {
				content = x
				break
			}
		}
		var b strings.Builder
		appendText(&b, content)
		out = append(out, chatMsg{role: role, text: b.String()})
	}
	return out, nil
}

// firstUserText is the text of a chat's first user message (else of its
// first message), "<image>" placeholders removed, trimmed (AIPerf's
// HFConversation rule).
func firstUserText(msgs []chatMsg) string {
	if len(msgs) == 0 {
		return ""
	}
	m := msgs[0]
	for _, x := range msgs {
		if x.role == "user" {
			m = x
			break
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(m.text, "<image>", ""))
}

// chatTurns makes each user message of a chat a turn, capped at the
// length of the assistant reply after it (when there is a tokenizer and
// no output column); the first system message is the system prompt.
func (c *hubConv) chatTurns(msgs []chatMsg, ownCap bool) ([]Turn, string) {
	var turns []Turn
	system := ""
	for i, m := range msgs {
		switch m.role {
		case "system":
			if system == "" {
				system = m.text
			}
		case "user":
			if strings.TrimSpace(m.text) == "" {
				continue
			}
			t := Turn{Text: m.text}
			if i+1 < len(msgs) && msgs[i+1].role == "assistant" && c.tok != nil && !ownCap {
				if n := len(c.tok.Encode(msgs[i+1].text)); n > 0 {
					t.MaxTokens = min(n, MaxRequestTokens)
				}
			}
			turns = append(turns, t)
		}
	}
	return turns, system
}

// promptTexts reads a prompt column: text, or a list of texts (a turn
// each); blank ones are left out.
func promptTexts(v any) ([]string, error) {
	if list, ok := v.([]any); ok {
		var out []string
		for i, x := range list {
			s, ok := scalarText(x)
			if !ok && !isEmpty(x) {
				return nil, fmt.Errorf("item %d holds %s, not text", i, kindOf(x))
			}
			if strings.TrimSpace(s) != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	s, ok := scalarText(v)
	if !ok && !isEmpty(v) {
		return nil, fmt.Errorf("holds %s, not text", kindOf(v))
	}
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	return []string{s}, nil
}

// formatTemplate fills a prompt template's {column} fields from the row
// (Python's str.format, as AIPerf's prompt_template: "{{" and "}}" are
// braces).
func formatTemplate(tmpl string, r hf.Row) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		ch := tmpl[i]
		switch {
		case ch == '{' && i+1 < len(tmpl) && tmpl[i+1] == '{', ch == '}' && i+1 < len(tmpl) && tmpl[i+1] == '}':
			b.WriteByte(ch)
			i++
		case ch == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("the prompt template has an unclosed {")
			}
			name := tmpl[i+1 : i+end]
			v, ok := r[name]
			if !ok {
				return "", fmt.Errorf("no column %q for the prompt template", name)
			}
			s, _ := scalarText(v)
			b.WriteString(s)
			i += end
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), nil
}

// templateFields are the columns a template names.
func templateFields(tmpl string) []string {
	var out []string
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '{' {
			continue
		}
		if i+1 < len(tmpl) && tmpl[i+1] == '{' {
			i++
			continue
		}
		if end := strings.IndexByte(tmpl[i:], '}'); end > 0 {
			out = append(out, tmpl[i+1:i+end])
			i += end
		}
	}
	return out
}

// imageParts resolves an image column: bytes, the datasets library's
// {"bytes", "path"}, a URL or data URL, or a list of them.
func imageParts(v any, files *media.Files) ([]media.Part, error) {
	var out []media.Part
	for i, x := range asList(v) {
		if isEmpty(x) {
			continue
		}
		p, err := imagePart(x, files)
		if err != nil {
			if _, isList := v.([]any); isList {
				return nil, fmt.Errorf("image %d: %v", i, err)
			}
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// firstImage is the first image of a column that resolves (AIPerf sends
// one); none when none does.
func firstImage(v any, files *media.Files) []media.Part {
	for _, x := range asList(v) {
		if isEmpty(x) {
			continue
		}
		if p, err := imagePart(x, files); err == nil {
			return []media.Part{p}
		}
	}
	return nil
}

func imagePart(v any, files *media.Files) (media.Part, error) {
	switch x := v.(type) {
	case []byte:
		return media.ImageBytes(x)
	case string:
		return files.Image(x)
	case map[string]any:
		if b := bytesOf(x["bytes"]); len(b) > 0 {
			return media.ImageBytes(b)
		}
		if p, _ := x["path"].(string); strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
			return media.ImageURL(p), nil
		}
		return media.Part{}, fmt.Errorf("an image without bytes (path %q only): surge sends the bytes a dataset holds, or a URL", truncate(fmt.Sprint(x["path"]), 80))
	}
	return media.Part{}, fmt.Errorf("an image that is %s", kindOf(v))
}

// audioPart resolves one clip: bytes, {"bytes", "path"}, {"array",
// "sampling_rate"} (float samples, encoded as 16-bit WAV), or a data URL
// or AIPerf's "wav,<base64>".
func audioPart(v any, files *media.Files) (media.Part, error) {
	switch x := v.(type) {
	case []byte:
		return media.AudioBytes(x)
	case string:
		return files.Audio(x)
	case map[string]any:
		if b := bytesOf(x["bytes"]); len(b) > 0 {
			return media.AudioBytes(b)
		}
		if arr, ok := x["array"].([]any); ok {
			rate, ok, err := intValue(x["sampling_rate"])
			if err != nil || !ok || rate <= 0 || rate > 384000 {
				return media.Part{}, fmt.Errorf("a sample array without a sampling_rate")
			}
			return floatWAV(arr, rate)
		}
		return media.Part{}, fmt.Errorf("a clip without bytes (path %q only)", truncate(fmt.Sprint(x["path"]), 80))
	}
	return media.Part{}, fmt.Errorf("a clip that is %s", kindOf(v))
}

// floatWAV encodes samples in [-1, 1] as mono 16-bit PCM WAV.
func floatWAV(arr []any, rate int) (media.Part, error) {
	if len(arr)*2 > media.MaxDecodedBytes {
		return media.Part{}, fmt.Errorf("%d samples: more than %d MiB as WAV", len(arr), media.MaxDecodedBytes>>20)
	}
	b := make([]byte, 44, 44+2*len(arr))
	for i, s := range arr {
		f, ok := s.(float64)
		if !ok {
			n, isInt := s.(int64)
			if !isInt {
				return media.Part{}, fmt.Errorf("sample %d is %s, not a number", i, kindOf(s))
			}
			f = float64(n)
		}
		v := int16(math.Round(max(-1, min(1, f)) * 32767))
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	size := len(b) - 44
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+size))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*2))
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(size))
	return media.AudioData(media.FormatWAV, b, float64(len(arr))/float64(rate)), nil
}

// bytesOf is binary column data: bytes, or a string of them (Parquet's
// untyped binary), or base64 text in a JSON file's {"bytes": "..."}.
func bytesOf(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string:
		if isBase64Text(x) {
			if b, err := base64.StdEncoding.DecodeString(x); err == nil {
				return b
			}
		}
		return []byte(x)
	}
	return nil
}

// isBase64Text tells base64 text from raw bytes held in a string (media
// bytes always hold bytes outside base64's alphabet).
func isBase64Text(s string) bool {
	if len(s) == 0 || len(s)%4 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// isEmpty reports a null, empty string, empty list or empty struct.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case []byte:
		return len(x) == 0
	case map[string]any:
		for _, y := range x {
			if !isEmpty(y) {
				return false
			}
		}
		return true
	}
	return false
}

// scalarText is a text or number value as text.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// intValue reads a token count: an integer, a whole float, or a numeric
// string; ok is false for a null.
func intValue(v any) (int, bool, error) {
	switch x := v.(type) {
	case nil:
		return 0, false, nil
	case int64:
		if x < 0 || x > math.MaxInt32 {
			return 0, false, fmt.Errorf("%d is not a token count", x)
		}
		return int(x), true, nil
	case int32:
		return intValue(int64(x))
	case float64:
		if x != math.Trunc(x) {
			return 0, false, fmt.Errorf("%g is not a whole number", x)
		}
		return intValue(int64(x))
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%q is not an integer", truncate(x, 40))
		}
		return intValue(n)
	}
	return 0, false, fmt.Errorf("holds %s, not an integer", kindOf(v))
}

// kindOf names a value's JSON kind.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case []byte:
		return "bytes"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case bool:
		return "a boolean"
	}
	return "a number"
}
