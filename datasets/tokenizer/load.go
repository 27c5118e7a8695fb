package tokenizer

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/surgebench/surge/internal/bounded"
)

// FileName is the name Load looks for inside a folder (then FileName+".gz").
const FileName = "tokenizer.json"

// Load reads a Hugging Face tokenizer.json: path is the file itself (plain
// or gzip-compressed) or a folder holding tokenizer.json or
// tokenizer.json.gz. It supports byte-level BPE models (GPT-2, Llama 3,
// Qwen2/3 and others built the same way); anything else is an error naming
// the path and the unsupported field.
func Load(path string) (*Tokenizer, error) {
	file, name, err := resolve(path)
	if err != nil {
		return nil, err
	}
	data, err := readMaybeGzip(file)
	if err != nil {
		return nil, err
	}
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", file, err)
	}
	t.name = name
	return t, nil
}

// resolve finds the file to read and the tokenizer's display name: the
// folder's name, or the file's name when it sits in the working directory.
func resolve(path string) (file, name string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", "", fmt.Errorf("tokenizer: %w", err)
	}
	if st.IsDir() {
		for _, n := range []string{FileName, FileName + ".gz"} {
			f := filepath.Join(path, n)
			if _, err := os.Stat(f); err == nil {
				return f, filepath.Base(filepath.Clean(path)), nil
			}
		}
		return "", "", fmt.Errorf("tokenizer: folder %s holds no %s", path, FileName)
	}
	dir := filepath.Dir(path)
	name = filepath.Base(dir)
	if dir == "." || dir == string(filepath.Separator) {
		name = filepath.Base(path)
	}
	return path, name, nil
}

// MaxFileBytes bounds a tokenizer.json, gzip-compressed or not (Llama's
// and Qwen's are 7–11 MiB).
const MaxFileBytes = 256 << 20

func readMaybeGzip(file string) ([]byte, error) {
	data, err := bounded.ReadFile(context.Background(), file, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", file, err)
	}
	plain, err := bounded.ReadAll(context.Background(), zr, MaxFileBytes, file+" once decompressed")
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: gzip: %w", file, err)
	}
	return plain, nil
}

// The parts of tokenizer.json that decide how text is encoded.
type fileJSON struct {
	AddedTokens  []addedJSON     `json:"added_tokens"`
	Normalizer   *componentJSON  `json:"normalizer"`
	PreTokenizer *componentJSON  `json:"pre_tokenizer"`
	Decoder      *componentJSON  `json:"decoder"`
	Model        *modelJSON      `json:"model"`
	PostProc     json.RawMessage `json:"post_processor"` // adds special tokens only: ignored
}

type addedJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// componentJSON is any normalizer, pre-tokenizer or decoder.
type componentJSON struct {
	Type    string `json:"type"`
	Pattern *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior       string          `json:"behavior"`
	Invert         bool            `json:"invert"`
	AddPrefixSpace bool            `json:"add_prefix_space"`
	UseRegex       *bool           `json:"use_regex"`
	PreTokenizers  []componentJSON `json:"pretokenizers"`
	Normalizers    []componentJSON `json:"normalizers"`
	Decoders       []componentJSON `json:"decoders"`
}

type modelJSON struct {
	Type                    string          `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   map[string]int  `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

// parse builds a Tokenizer from the bytes of a tokenizer.json.
func parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(data, err)
	}
	m := f.Model
	switch {
	case m == nil:
		return nil, errors.New(`no "model" object: not a Hugging Face tokenizer.json`)
	case m.Type != "BPE" && !(m.Type == "" && m.Merges != nil):
		return nil, fmt.Errorf("model.type %q is not supported (only byte-level BPE)", m.Type)
	case m.Dropout != nil && *m.Dropout > 0:
		return nil, fmt.Errorf("model.dropout %v is not supported (encoding would be random)", *m.Dropout)
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, fmt.Errorf("model.continuing_subword_prefix %q is not supported", *m.ContinuingSubwordPrefix)
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, fmt.Errorf("model.end_of_word_suffix %q is not supported", *m.EndOfWordSuffix)
	case len(m.Vocab) == 0:
		return nil, errors.New("model.vocab is empty")
	}
	t := &Tokenizer{ignoreMerges: m.IgnoreMerges}
	var err error
	if t.nfc, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pattern, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	t.split = splitterFor(t.pattern)
	if f.Decoder != nil && f.Decoder.Type != "ByteLevel" {
		return nil, fmt.Errorf("decoder.type %q is not supported (want ByteLevel)", f.Decoder.Type)
	}
	if err := t.buildVocab(m.Vocab, f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.buildMerges(m.Vocab, m.Merges); err != nil {
		return nil, err
	}
	return t, nil
}

// jsonError names the line and column of a JSON syntax or type error.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	// Offset counts the byte that failed, so the column is that byte's.
	col := max(int(off)-bytes.LastIndexByte(before, '\n')-1, 1)
	return fmt.Errorf("line %d, column %d: not valid tokenizer JSON: %w", line, col, err)
}

func parseNormalizer(c *componentJSON) (nfc bool, err error) {
	if c == nil {
		return false, nil
	}
	switch c.Type {
	case "NFC":
		return true, nil
	case "Sequence":
		for i, n := range c.Normalizers {
			if n.Type != "NFC" {
				return false, fmt.Errorf("normalizer.normalizers[%d].type %q is not supported (only NFC)", i, n.Type)
			}
			nfc = true
		}
		return nfc, nil
	}
	return false, fmt.Errorf("normalizer.type %q is not supported (only NFC or none)", c.Type)
}

// parsePreTokenizer returns the pre-tokenizer's split pattern (one that
// splitterFor knows).
func parsePreTokenizer(c *componentJSON) (string, error) {
	if c == nil {
		return "", errors.New("pre_tokenizer is null: only byte-level BPE is supported")
	}
	if c.Type == "ByteLevel" {
		if c.AddPrefixSpace {
			return "", errors.New("pre_tokenizer ByteLevel add_prefix_space: true is not supported")
		}
		if c.UseRegex != nil && !*c.UseRegex {
			return "", errors.New("pre_tokenizer ByteLevel with use_regex: false and no Split is not supported")
		}
		return patternGPT2, nil
	}
	if c.Type != "Sequence" || len(c.PreTokenizers) != 2 {
		return "", fmt.Errorf("pre_tokenizer.type %q is not supported (want ByteLevel, or Sequence of Split and ByteLevel)", c.Type)
	}
	sp, bl := c.PreTokenizers[0], c.PreTokenizers[1]
	if sp.Type != "Split" || bl.Type != "ByteLevel" {
		return "", fmt.Errorf("pre_tokenizer.pretokenizers %q, %q are not supported (want Split, ByteLevel)", sp.Type, bl.Type)
	}
	if bl.AddPrefixSpace || (bl.UseRegex != nil && *bl.UseRegex) {
		return "", errors.New("pre_tokenizer.pretokenizers[1] ByteLevel must have add_prefix_space and use_regex false")
	}
	if sp.Behavior != "Isolated" || sp.Invert {
		return "", fmt.Errorf("pre_tokenizer.pretokenizers[0] Split behavior %q invert %v is not supported (want Isolated, false)", sp.Behavior, sp.Invert)
	}
	if sp.Pattern == nil || sp.Pattern.Regex == nil {
		return "", errors.New("pre_tokenizer.pretokenizers[0].pattern.Regex is missing")
	}
	if p := *sp.Pattern.Regex; splitterFor(p) != nil {
		return p, nil
	}
	return "", fmt.Errorf("pre_tokenizer.pretokenizers[0].pattern.Regex %q is not supported (known: Qwen2/3, Llama 3, GPT-2 patterns)", *sp.Pattern.Regex)
}

// buildVocab fills the decode table, the byte tokens and the matcher for
// non-special added tokens.
func (t *Tokenizer) buildVocab(vocab map[string]int, added []addedJSON) error {
	maxID := -1
	for tok, id := range vocab {
		if id < 0 {
			return fmt.Errorf("model.vocab[%q]: negative id %d", tok, id)
		}
		maxID = max(maxID, id)
	}
	for i, a := range added {
		if a.ID < 0 {
			return fmt.Errorf("added_tokens[%d]: negative id %d", i, a.ID)
		}
		maxID = max(maxID, a.ID)
	}
	if maxID >= 1<<31-1 {
		return fmt.Errorf("model.vocab: id %d is too large", maxID)
	}
	pieces := make([]string, maxID+1)
	known := make([]bool, maxID+1)
	if t.ignoreMerges {
		t.whole = make(map[string]int32, len(vocab))
	}
	for tok, id := range vocab {
		raw, ok := byteLevelDecode(tok)
		if !ok {
			return fmt.Errorf("model.vocab[%q]: not in the byte-level alphabet (only byte-level BPE is supported)", tok)
		}
		pieces[id] = string(raw)
		known[id] = true
		if t.whole != nil {
			t.whole[pieces[id]] = int32(id)
		}
	}
	for b := range 256 {
		id, ok := vocab[string(byteToRune[b])]
		if !ok {
			return fmt.Errorf("model.vocab lacks the byte-level token %q for byte 0x%02x", string(byteToRune[b]), b)
		}
		t.byteID[b] = int32(id)
	}
	var matched, matchedNorm []addedToken
	for _, a := range added {
		if !known[a.ID] {
			pieces[a.ID] = a.Content
			known[a.ID] = true
		}
		if a.Special {
			continue // never matched in text: see the package comment
		}
		tok := addedToken{content: a.Content, id: int32(a.ID), lstrip: a.LStrip, rstrip: a.RStrip, singleWrd: a.SingleWord}
		if a.Normalized {
			if t.nfc {
				tok.content = norm.NFC.String(tok.content)
			}
			matchedNorm = append(matchedNorm, tok)
		} else {
			matched = append(matched, tok)
		}
	}
	t.added, t.addedNorm = newAddedMatcher(matched), newAddedMatcher(matchedNorm)
	t.known = make([]byte, (len(known)+7)/8)
	for id, k := range known {
		if k {
			t.known[id/8] |= 1 << (id % 8)
		}
	}
	size := 0
	for _, p := range pieces {
		size += len(p)
	}
	t.offs, t.text = make([]byte, 0, 4*(len(pieces)+1)), make([]byte, 0, size)
	for _, p := range pieces {
		t.offs = binary.LittleEndian.AppendUint32(t.offs, uint32(len(t.text)))
		t.text = append(t.text, p...)
	}
	t.offs = binary.LittleEndian.AppendUint32(t.offs, uint32(len(t.text)))
	return nil
}

// buildMerges reads model.merges, either ["a b", ...] (older files) or
// [["a","b"], ...] (tokenizers ≥ 0.20).
func (t *Tokenizer) buildMerges(vocab map[string]int, raw json.RawMessage) error {
	var pairs [][2]string
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	if len(trimmed) > 1 && trimmed[0] == '[' && bytes.TrimLeft(trimmed[1:], " \t\r\n")[0] == '"' {
		var lines []string
		if err := json.Unmarshal(raw, &lines); err != nil {
			return fmt.Errorf("model.merges: %w", err)
		}
		pairs = make([][2]string, len(lines))
		for i, l := range lines {
			a, b, ok := strings.Cut(l, " ")
			if !ok || strings.Contains(b, " ") {
				return fmt.Errorf("model.merges[%d]: %q is not two tokens separated by one space", i, l)
			}
			pairs[i] = [2]string{a, b}
		}
	} else if len(trimmed) > 0 && string(trimmed) != "null" {
		if err := json.Unmarshal(raw, &pairs); err != nil {
			return fmt.Errorf("model.merges: %w", err)
		}
	}
	t.pairs = newPairTable(len(pairs))
	var joined []byte
	for i, p := range pairs {
		a, okA := vocab[p[0]]
		b, okB := vocab[p[1]]
		joined = append(append(joined[:0], p[0]...), p[1]...)
		m, okM := vocab[string(joined)]
		switch {
		case !okA:
			return fmt.Errorf("model.merges[%d]: token %q is not in the vocab", i, p[0])
		case !okB:
			return fmt.Errorf("model.merges[%d]: token %q is not in the vocab", i, p[1])
		case !okM:
			return fmt.Errorf("model.merges[%d]: merged token %q is not in the vocab", i, p[0]+p[1])
		}
		t.pairs.put(int32(a), int32(b), int32(i), int32(m))
	}
	return nil
}
