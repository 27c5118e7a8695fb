package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/surgebench/surge/internal/bounded"
)

// Footprint is what a workload will hold in memory, estimated before it
// is loaded (Estimate), so that a run can refuse one its memory budget
// cannot hold, with the numbers, before spending the memory.
type Footprint struct {
	// Source is what was estimated: the input file, or "synthetic".
	Source string
	// Rows is how many rows (lines) the input file has; Conversations how
	// many conversations the dataset will hold (0 when built on demand).
	Rows, Conversations int64
	// PromptTokens is the sum of the generated prompts' tokens, and
	// MaxPromptTokens the longest prompt's (0 when the input gives text
	// instead).
	PromptTokens, MaxPromptTokens int64
	// Held is the bytes the loaded dataset keeps for the run: its
	// conversations and what their prompts are made of.
	Held int64
	// Peak is the heap's high-water mark while loading: Held and what
	// reading the input needs on the way (its rows before they become
	// conversations, buffers).
	Peak int64
	// PerRequest is the bytes one request in flight needs for its
	// prompt at most: its text, spelled out, and its encoded body (the
	// longest prompt's, with the history a conversation's last turn sends).
	PerRequest int64
	// Exact says whether Held comes from the input's own lengths (a trace,
	// synthetic options) rather than from its size alone.
	Exact bool
}

// Need is the memory a run sending inFlight requests at once needs for
// its dataset: the larger of Peak and Held plus the requests'.
func (f *Footprint) Need(inFlight int) int64 {
	return max(f.Peak, f.Held+int64(max(inFlight, 1))*f.PerRequest)
}

// Check returns a *BudgetError when a run of inFlight requests at once
// needs more than budget bytes (budget ≤ 0: no budget).
func (f *Footprint) Check(inFlight int, budget int64) error {
	if need := f.Need(inFlight); budget > 0 && need > budget {
		return &BudgetError{Footprint: *f, InFlight: inFlight, Need: need, Budget: budget}
	}
	return nil
}

// BudgetError says that a workload needs more memory than the budget
// allows. The caller adds how to change either (its flags).
type BudgetError struct {
	Footprint
	InFlight     int
	Need, Budget int64
}

// Error gives the need, its parts and the budget.
func (e *BudgetError) Error() string {
	what := "this dataset"
	if e.Source == TypeSynthetic {
		what = "the synthetic prompts"
	} else if e.Source != "" {
		what = e.Source
	}
	return fmt.Sprintf("%s needs ≈ %s of memory (%s held, %s while loading, %d requests in flight × %s); the budget is %s",
		what, Bytes(e.Need), Bytes(e.Held), Bytes(e.Peak), max(e.InFlight, 1), Bytes(e.PerRequest), Bytes(e.Budget))
}

// Bytes writes n bytes as people read them: "9.4 GB", "512 MB", "12 kB".
func Bytes(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if math.Abs(v) < 1000 || u == "TB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.3g %s", v, u)
		}
		v /= 1000
	}
	return ""
}

// DefaultMemoryBudget is the memory a run may use when none is given:
// three quarters of the machine's RAM (/proc/meminfo's MemTotal), or of the
// cgroup's limit when that is lower (a container). ok is false where
// neither can be read (not Linux): no budget is known.
func DefaultMemoryBudget() (budget int64, ok bool) {
	total, ok := memTotal()
	if !ok {
		return 0, false
	}
	if lim, lok := cgroupLimit(); lok && lim < total {
		total = lim
	}
	return total / 4 * 3, true
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() (int64, bool) {
	b, err := bounded.ReadFile(context.Background(), "/proc/meminfo", 1<<20)
	if err != nil {
		return 0, false
	}
	return parseMemInfo(b)
}

// parseMemInfo finds "MemTotal: N kB".
func parseMemInfo(b []byte) (int64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

// cgroupLimit reads cgroup v2's memory.max ("max": none).
func cgroupLimit() (int64, bool) {
	b, err := bounded.ReadFile(context.Background(), "/sys/fs/cgroup/memory.max", 4<<10)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// What the estimates count, from the types themselves.
const (
	turnBytes = int64(unsafe.Sizeof(Turn{}))
	convBytes = int64(unsafe.Sizeof(Conversation{}))
	// A conversation: its place in a slice grown by append (up to twice
	// its size while it grows) and its ID ("trace-123456").
	convHeld = 2*convBytes + 16
	// A trace row: its turn (twice, in a session's slice grown by
	// append) and its Prompt.
	rowHeld        = turnBytes + int64(unsafe.Sizeof(Prompt{}))
	sessionRowHeld = 2*turnBytes + int64(unsafe.Sizeof(Prompt{}))
	// A hash id: 8 bytes in a slice encoding/json grows by half.
	idHeld = 12
	// reading: the line reader's buffer.
	readingBytes = 256 << 10
	// The collector lets the heap grow to twice what is live before it
	// collects (GOGC 100), and not at all below 4 MiB: a load's garbage
	// (about a kilobyte a row decoded) fills the heap up to there.
	garbagePerRow = 1 << 10
	gcFloor       = 4 << 20
)

// Estimate says what loading the workload o describes will hold, without
// loading it: a Mooncake trace's lines are scanned for their lengths (no
// prompt is built, nothing is kept), other files are judged by their size,
// synthetic prompts by their options. It stops soon after ctx is done.
func Estimate(ctx context.Context, o Options) (*Footprint, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("estimating the dataset: %w", err)
	}
	o.Synthetic.Seed = o.Seed
	if o.Synthetic.Tokenizer == nil {
		o.Synthetic.Tokenizer = o.Tokenizer
	}
	corpus, err := promptCorpus(o.PromptCorpus)
	if err != nil {
		return nil, err
	}
	p, err := newCorpusPrompter(ctx, o.Synthetic.Tokenizer, o.Seed, corpus)
	if err != nil {
		return nil, err
	}
	if o.InputFile == "" && o.PublicDataset == "" {
		return estimateSynthetic(o, p), nil
	}
	file := o.InputFile
	if file == "" {
		return nil, optionErrorf("InputFile", "a public dataset is estimated from its file: give it")
	}
	st, err := os.Stat(file)
	if err != nil {
		return nil, &InputError{File: file, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
	}
	f := &Footprint{Source: file}
	if st.IsDir() {
		size, c, err := dirCounts(ctx, file, o)
		if err != nil {
			return nil, err
		}
		f.Rows = c.lines
		f.Held = sizeHeld(size, c)
		f.Peak = loadPeak(f.Held, c.lines)
		return f, nil
	}
	kind := o.CustomDatasetType
	if kind == "" {
		if kind, err = guessFile(ctx, file); err != nil {
			return nil, err
		}
	}
	if kind != TypeMooncake {
		c, err := countFile(ctx, file, o)
		if err != nil {
			return nil, err
		}
		f.Rows = c.lines
		f.Held = sizeHeld(st.Size(), c)
		f.Peak = loadPeak(f.Held, c.lines)
		return f, nil
	}
	bs := o.ISLBlockSize
	if bs <= 0 {
		bs = DefaultISLBlockSize
	}
	if err := scanMooncake(ctx, file, o, bs, f); err != nil {
		return nil, err
	}
	// The corpus the prompts are spelled from.
	f.Held += corpusBytes(p)
	f.Peak += 2 * corpusBytes(p)
	f.PerRequest = requestBytes(p, f.MaxPromptTokens, 1)
	return f, nil
}

// guessFile is guessType on a file by name.
func guessFile(ctx context.Context, file string) (string, error) {
	fh, err := bounded.OpenStream(ctx, file)
	if err != nil {
		return "", openError(ctx, file, err)
	}
	defer fh.Close()
	return guessType(ctx, fh, file)
}

// counts are what a file's bytes say of what it holds.
type counts struct {
	lines   int64 // rows, or lines of a JSON document
	objects int64 // JSON objects: each a turn, a message or a map at most
}

// sizeHeld is at most what a file of size bytes holds loaded, judged by
// its bytes: its text as Go strings (twice: a string and its parse), each
// of its JSON objects a turn or a map, each line a conversation. An
// upper bound: filters (ShareGPT's) and shared values hold less.
func sizeHeld(size int64, c counts) int64 {
	return 2*size + c.objects*500 + c.lines*convHeld
}

// countFile counts a file's lines and JSON objects (its bytes read once,
// through the bounded, cancellable reader).
func countFile(ctx context.Context, file string, o Options) (counts, error) {
	r, closeFile, err := openInput(ctx, file, o)
	if err != nil {
		return counts{}, err
	}
	defer closeFile()
	buf := make([]byte, 256<<10)
	var c counts
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			c.lines += int64(bytes.Count(buf[:k], []byte{'\n'}))
			c.objects += int64(bytes.Count(buf[:k], []byte{'{'}))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				c.lines++ // a last line without its newline
			}
			return c, nil
		}
		if err != nil {
			return counts{}, readError(file, int(c.lines)+1, err)
		}
	}
}

// dirCounts is the size and counts of a folder's files (one level).
func dirCounts(ctx context.Context, dir string, o Options) (size int64, all counts, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, counts{}, &InputError{File: dir, Msg: err.Error(), Err: err}
	}
	for _, e := range ents {
		info, ierr := e.Info()
		if ierr != nil || !info.Mode().IsRegular() {
			continue
		}
		c, err := countFile(ctx, filepath.Join(dir, e.Name()), o)
		if err != nil {
			return 0, counts{}, err
		}
		size, all.lines, all.objects = size+info.Size(), all.lines+c.lines, all.objects+c.objects
	}
	return size, all, nil
}

// requestBytes is what a request of a prompt of tokens tokens (turns the
// history it carries) holds in flight: the text spelled out, and the body
// it is encoded into (JSON escapes: about a tenth more).
func requestBytes(p *prompter, tokens int64, turns int) int64 {
	text := int64(p.bytesFor(int(min(tokens, MaxRequestTokens)))) * int64(max(turns, 1))
	return text + text*11/10 + 4<<10
}

// scanMooncake reads a Mooncake trace's lengths into f: per line its
// input_length, the number of its hash_ids, and for rows that give text,
// messages or payload the line's size (what their values will hold).
func scanMooncake(ctx context.Context, file string, o Options, bs int, f *Footprint) error {
	r, closeFile, err := openInput(ctx, file, o)
	if err != nil {
		return err
	}
	defer closeFile()
	f.Exact = true
	var ids, literal, inSessions int64
	sessions := map[string]bool{}
	_, err = newLineReader(r, file).each(func(line int, b []byte) error {
		f.Rows++
		sid, hasSession := jsonString(b, `"session_id"`)
		if hasSession {
			inSessions++
		}
		if !hasSession || !sessions[sid] {
			f.Conversations++
			if hasSession {
				sessions[sid] = true
			}
		}
		if bytes.Contains(b, []byte(`"text`)) || bytes.Contains(b, []byte(`"messages"`)) || bytes.Contains(b, []byte(`"payload"`)) {
			literal += int64(len(b))
			return nil
		}
		n, ok := jsonInt(b, `"input_length"`)
		if !ok || n <= 0 {
			return nil
		}
		n = min(n, MaxRequestTokens)
		f.PromptTokens += n
		f.MaxPromptTokens = max(f.MaxPromptTokens, n)
		ids += jsonArrayLen(b, `"hash_ids"`)
		return nil
	})
	if err != nil {
		return err
	}
	f.Held = f.Conversations*convHeld + (f.Rows-inSessions)*rowHeld + inSessions*sessionRowHeld +
		idHeld*ids + 8*literal + int64(len(sessions))*64
	if o.OnDemand {
		// Compact rows (a slice grown by append: a quarter more), their
		// ids in one slice, a row's conversation while reading.
		f.Held = f.Rows*traceRowBytes*5/4 + ids*8*5/4 + literal*(turnBytes+8*64)/64 + int64(len(sessions))*96
		f.Peak = loadPeak(f.Held+f.Rows*(traceRowBytes+8), f.Rows) // the old rows while the slice grows
		f.Conversations = 0
		return nil
	}
	f.Peak = loadPeak(f.Held, f.Rows)
	return nil
}

// loadPeak is the heap's high-water mark while loading rows into held
// bytes: the collector's doubling, its floor, the reader's buffer.
func loadPeak(held, rows int64) int64 {
	return 2*held + min(rows*garbagePerRow, gcFloor) + readingBytes
}

// jsonInt finds key's integer value on a JSON line (a quick look, not a
// parse: the load checks the line).
func jsonInt(b []byte, key string) (int64, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t:")
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == '-') {
		j++
	}
	n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return n, err == nil
}

// jsonString finds key's string value on a JSON line (no escapes).
func jsonString(b []byte, key string) (string, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return "", false
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t:")
	if len(rest) == 0 || rest[0] != '"' {
		return "", false
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return "", false
	}
	return string(rest[1 : 1+end]), true
}

// jsonArrayLen counts the elements of key's array of numbers on a line.
func jsonArrayLen(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0
	}
	rest := bytes.TrimLeft(b[i+len(key):], " \t:")
	if len(rest) == 0 || rest[0] != '[' {
		return 0
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return 0
	}
	arr := bytes.TrimSpace(rest[1:end])
	if len(arr) == 0 {
		return 0
	}
	return int64(bytes.Count(arr, []byte{','})) + 1
}

// estimateSynthetic is the footprint of synthetic prompts: each held
// prompt is its parts (a head, then spans of the corpus ring, 16 bytes
// each) in a turn; on demand only the conversations in flight exist.
func estimateSynthetic(o Options, p *prompter) *Footprint {
	so := o.Synthetic
	f := &Footprint{Source: TypeSynthetic, Exact: true}
	isl := int64(so.ISL) + int64(math.Ceil(3*so.ISLStddev))
	if so.RangeRatio > 0 {
		isl = int64(math.Ceil(float64(so.ISL) * (1 + so.RangeRatio)))
	}
	if so.SeqDist != nil {
		isl = int64(so.SeqDist.maxISL())
	}
	isl = min(isl, MaxRequestTokens)
	longest := isl + int64(so.PrefixLength) + int64(so.SharedSystemPromptLength)
	turns := int64(max(so.Turns, 1)) + int64(3*so.TurnsStddev)
	f.MaxPromptTokens = longest
	osl := int64(so.OSL) + int64(math.Ceil(3*so.OSLStddev))
	// A later turn carries the earlier turns and replies.
	f.PerRequest = requestBytes(p, longest+(turns-1)*(isl+osl), 1)
	held := int64(p.bytesFor(so.SharedSystemPromptLength)) + int64(so.PrefixPoolSize)*int64(p.bytesFor(so.PrefixLength))
	if !o.OnDemand {
		meanTurns := int64(max(so.Turns, 1))
		f.Conversations = int64(so.Count)
		f.PromptTokens = int64(so.Count) * meanTurns * int64(so.ISL)
		parts := 3 + int64(so.ISL)/int64(max(p.ringTok, 1))
		perTurn := turnBytes + 16*parts*2 // the parts' slice grows by append
		held += int64(so.Count) * (convBytes + 24 + meanTurns*perTurn)
	}
	f.Held = held + corpusBytes(p)
	f.Peak = loadPeak(f.Held, f.Conversations)
	return f
}

// corpusBytes is what the prompter holds: the ring, its offsets, the words.
func corpusBytes(p *prompter) int64 {
	return int64(len(p.ring)) + 4*int64(len(p.off)+len(p.starts)) + 24*int64(len(p.words))
}

// Describe is a line for the run's log: what the dataset holds and a
// request in flight needs.
func (f *Footprint) Describe() string {
	how := "≈"
	if !f.Exact {
		how = "≈ (from the file's size)"
	}
	return fmt.Sprintf("dataset memory: %s %s held, %s while loading, %s a request in flight", how, Bytes(f.Held), Bytes(f.Peak), Bytes(f.PerRequest))
}
