package datasets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// over is one token past the per-request limit.
const over = MaxRequestTokens + 1

// TestLimitsInFiles: every length a file asks for past its limit is an
// *InputError naming file:line, caused by a *LimitError.
func TestLimitsInFiles(t *testing.T) {
	t.Parallel()
	header := "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	// 2049 rows of 8192 blocks of 512 tokens name 2^24+8192 blocks.
	blocks := strings.Repeat(fmt.Sprintf(`{"input_length": %d}`+"\n", MaxRequestTokens), MaxTraceBlocks/(MaxRequestTokens/DefaultISLBlockSize)+1)
	tests := []struct {
		name, typ, content, want string
	}{
		{"the 60-byte line", TypeMooncake, `{"timestamp":0,"input_length":1000000000,"output_length":8}`,
			"1: input_length 1000000000 is over the limit of 4194304 tokens"},
		{"mooncake input at the limit, output over", TypeMooncake, fmt.Sprintf(`{"input_length": %d}`+"\n"+`{"input_length": 5, "output_length": %d}`, MaxRequestTokens, over),
			"2: output_length 4194305 is over the limit of 4194304 tokens"},
		{"mooncake text's length", TypeMooncake, fmt.Sprintf(`{"text_input": "hi", "input_length": %d}`, over),
			"1: input_length 4194305 is over the limit of 4194304 tokens"},
		{"mooncake blocks in all", TypeMooncake, blocks,
			"2049: prompt blocks in the trace: 16785408 so far, over the limit of 16777216"},
		{"azure context", TypeAzure, header + fmt.Sprintf("2023-11-16 18:15:46.6805900,%d,4\n", over),
			"2: ContextTokens 4194305 is over the limit of 4194304 tokens"},
		{"azure generated", TypeAzure, header + fmt.Sprintf("2023-11-16 18:15:46.6805900,4,%d\n", over),
			"2: GeneratedTokens 4194305 is over the limit of 4194304 tokens"},
		{"single turn output", TypeSingleTurn, fmt.Sprintf(`{"text": "a", "output_length": %d}`, over),
			"1: output_length 4194305 is over the limit of 4194304 tokens"},
		{"multi turn output", TypeMultiTurn, fmt.Sprintf(`{"turns": [{"text": "a"}, {"text": "b", "output_length": %d}]}`, over),
			"1: turns[1]: output_length 4194305 is over the limit of 4194304 tokens"},
		{"long line", TypeSingleTurn, `{"text": "a"}` + "\n" + `{"text": "` + strings.Repeat("x", MaxLineBytes) + `"}` + "\n",
			"2: the line is longer than the limit of 16777216 bytes (16 MiB)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "f", tc.content)
			_, _, err := Load(Options{InputFile: path, CustomDatasetType: tc.typ})
			checkLimit(t, err, path+":"+tc.want)
		})
	}
}

// checkLimit fails unless err reads want and is a limit in a file.
func checkLimit(t *testing.T, err error, want string) {
	t.Helper()
	var ie *InputError
	var le *LimitError
	if !errors.As(err, &ie) || !errors.As(err, &le) {
		t.Fatalf("got %v (%T), want an *InputError caused by a *LimitError", err, err)
	}
	if err.Error() != want {
		t.Errorf("error\n got %q\nwant %q", err.Error(), want)
	}
}

// TestLimitsInOptions: every token length an option gives past the limit
// is an *OptionError naming the option, caused by a *LimitError.
func TestLimitsInOptions(t *testing.T) {
	t.Parallel()
	syn := SyntheticOptions{Count: 1, ISL: 10}
	with := func(f func(*SyntheticOptions)) Options {
		o := syn
		f(&o)
		return Options{Synthetic: o}
	}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"ISL", with(func(o *SyntheticOptions) { o.ISL = over }), "Synthetic.ISL 4194305 is over the limit of 4194304 tokens"},
		{"ISL stddev", with(func(o *SyntheticOptions) { o.ISLStddev = 1e9 }), "Synthetic.ISLStddev 1e+09 is over the limit of 4194304 tokens"},
		{"OSL", with(func(o *SyntheticOptions) { o.OSL = over }), "Synthetic.OSL 4194305 is over the limit of 4194304 tokens"},
		{"OSL stddev", with(func(o *SyntheticOptions) { o.OSLStddev = 5e6 }), "Synthetic.OSLStddev 5e+06 is over the limit of 4194304 tokens"},
		{"prefix", with(func(o *SyntheticOptions) { o.PrefixPoolSize, o.PrefixLength = 1, over }), "Synthetic.PrefixLength 4194305 is over the limit of 4194304 tokens"},
		{"system prompt", with(func(o *SyntheticOptions) { o.SharedSystemPromptLength = over }), "Synthetic.SharedSystemPromptLength 4194305 is over the limit of 4194304 tokens"},
		{"block size", Options{ISLBlockSize: over, Synthetic: syn}, "ISLBlockSize 4194305 is over the limit of 4194304 tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Load(tc.o)
			var oe *OptionError
			var le *LimitError
			if !errors.As(err, &oe) || !errors.As(err, &le) {
				t.Fatalf("got %v (%T), want an *OptionError caused by a *LimitError", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tc.want)
			}
		})
	}

	d := &Dataset{Conversations: []Conversation{{Turns: []Turn{{Text: "q"}}}}}
	for _, tc := range []struct {
		o    PassageOptions
		want string
	}{
		{PassageOptions{Count: 1, ISL: over}, "Passages.ISL 4194305 is over the limit of 4194304 tokens"},
		{PassageOptions{Count: 1, ISL: 5, ISLStddev: over}, "Passages.ISLStddev 4194305 is over the limit of 4194304 tokens"},
		{PassageOptions{Count: 1025, ISL: 4096}, "Passages.Count 1025 passages of 4096 tokens are over the limit of 4194304 tokens a request"},
	} {
		var le *LimitError
		if err := AddPassages(d, tc.o); !errors.As(err, &le) || err.Error() != tc.want {
			t.Errorf("AddPassages(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestSampledLengthsCapped: a sampled length past the limit is capped at
// it (a mean at the limit with a wide stddev draws some over).
func TestSampledLengthsCapped(t *testing.T) {
	t.Parallel()
	d, err := Synthetic(SyntheticOptions{Count: 8, ISL: 1, OSL: MaxRequestTokens, OSLStddev: MaxRequestTokens, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	capped := 0
	for _, c := range d.Conversations {
		switch m := c.Turns[0].MaxTokens; {
		case m > MaxRequestTokens:
			t.Errorf("%s: OSL %d over the limit", c.ID, m)
		case m == MaxRequestTokens:
			capped++
		}
	}
	if capped == 0 {
		t.Errorf("no OSL drawn at the limit from a mean at the limit: the cap is untested")
	}
}

// allocated returns the bytes f allocates (the test must not run in
// parallel with others for the count to be its own).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestSixtyByteLineMemory: the 60-byte line that used to take 10 GiB is
// refused having allocated next to nothing.
func TestSixtyByteLineMemory(t *testing.T) {
	path := writeFile(t, "trace.jsonl", `{"timestamp":0,"input_length":1000000000,"output_length":8}`+"\n")
	o := Options{InputFile: path, CustomDatasetType: TypeMooncake}
	var err error
	// The line reader's 256 KiB buffer and the parse: well under 1 MiB.
	got := allocated(func() { _, _, err = Load(o) })
	if got > 1<<20 {
		t.Errorf("refusing the line allocated %d bytes, want ≤ 1 MiB", got)
	}
	t.Logf("the 60-byte line refused after allocating %d KiB", got>>10)
	checkLimit(t, err, path+":1: input_length 1000000000 is over the limit of 4194304 tokens")
}

// zeros is an endless input without a newline, as /dev/zero is.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestEndlessInput: an endless line is refused at the line limit, having
// allocated a small multiple of it, whatever reads it; /dev/zero itself
// too, as any type (guessed, a JSONL type, ShareGPT's JSON).
func TestEndlessInput(t *testing.T) {
	readers := map[string]func(io.Reader) error{
		"single_turn": func(r io.Reader) error { _, err := readSingleTurn(r, "zero"); return err },
		"mooncake": func(r io.Reader) error {
			p, err := newPrompter(nil, 0)
			if err == nil {
				_, _, _, err = readMooncake(context.Background(), r, "zero", 512, p, 0, false)
			}
			return err
		},
		"azure": func(r io.Reader) error { _, err := readAzure(r, "zero"); return err },
	}
	for name, read := range readers {
		var err error
		got := allocated(func() { err = read(newBoundedReader(context.Background(), zeros{})) })
		checkLimit(t, err, "zero:1: the line is longer than the limit of 16777216 bytes (16 MiB)")
		t.Logf("%s: an endless line refused after allocating %.1f MiB", name, float64(got)/(1<<20))
		if got > 3*MaxLineBytes {
			t.Errorf("%s: an endless line allocated %d bytes, want ≤ %d", name, got, 3*MaxLineBytes)
		}
	}

	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	for _, o := range []Options{
		{InputFile: "/dev/zero"},
		{InputFile: "/dev/zero", CustomDatasetType: TypeMooncake},
		{InputFile: "/dev/zero", PublicDataset: PublicShareGPT},
	} {
		var err error
		got := allocated(func() { _, _, err = Load(o) })
		want := "/dev/zero:1: the line is longer than the limit of 16777216 bytes (16 MiB)"
		if o.PublicDataset != "" {
			want = "/dev/zero:1: want a JSON array of conversations"
		}
		var ie *InputError
		if !errors.As(err, &ie) || err.Error() != want {
			t.Errorf("%s%s: got %v, want %q", o.CustomDatasetType, o.PublicDataset, err, want)
		}
		if got > 3*MaxLineBytes {
			t.Errorf("%s%s: allocated %d bytes, want ≤ %d", o.CustomDatasetType, o.PublicDataset, got, 3*MaxLineBytes)
		}
	}
}

// TestFileLimit: a regular file over MaxFileBytes is refused before it is
// read (a sparse file: no disk is spent), and a stream is cut at the
// limit.
func TestFileLimit(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	if err := os.WriteFile(path, []byte(`{"text": "a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxFileBytes+1); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	start := time.Now()
	_, _, err := Load(Options{InputFile: path, CustomDatasetType: TypeSingleTurn})
	checkLimit(t, err, path+": the file is longer than the limit of 1073741824 bytes (1024 MiB)")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusing took %v: it read the file", d)
	}

	// The stream's reader, with a small limit: it gives the limit's bytes
	// and one more, then fails.
	b := newBoundedReader(context.Background(), strings.NewReader(strings.Repeat("x\n", 100)))
	b.limit = 51
	data, err := io.ReadAll(b)
	var le *LimitError
	if !errors.As(err, &le) || len(data) != 52 || le.Error() != "the file is longer than the limit of 51 bytes (0 MiB)" {
		t.Errorf("read %d bytes, error %v; want 52 and the file limit", len(data), err)
	}
}

// TestLoadCanceled: a load stops with ctx's error when ctx is done before
// it starts, while it reads (a FIFO whose writer goes on forever or has
// stopped writing) and while it builds prompts.
func TestLoadCanceled(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	trace := writeFile(t, "t.jsonl", `{"input_length": 10}`+"\n")
	corpus := writeFile(t, "corpus.txt", "One sentence of the corpus.\nAnother sentence, longer than the first one.\n")
	share := writeFile(t, "g.json", `[{"conversations": [{"from": "human", "value": "hello there, how are you"}, {"from": "gpt", "value": "fine, thank you, and you"}]}]`)
	raw := writeFile(t, "r.jsonl", `{"x": 1}`+"\n")
	for name, o := range map[string]Options{
		"synthetic":     {Synthetic: SyntheticOptions{Count: 10, ISL: 10}},
		"on demand":     {OnDemand: true, Synthetic: SyntheticOptions{ISL: 10}},
		"mooncake":      {InputFile: trace, CustomDatasetType: TypeMooncake},
		"guessed":       {InputFile: trace},
		"a corpus file": {PromptCorpus: corpus, Tokenizer: qwen(t), Synthetic: SyntheticOptions{Count: 10, ISL: 10}},
		"sharegpt":      {InputFile: share, PublicDataset: PublicShareGPT},
		"raw_payload":   {InputFile: raw, CustomDatasetType: TypeRawPayload},
		"weka":          {InputFile: "testdata/weka", CustomDatasetType: TypeWeka},
	} {
		if _, _, err := LoadContext(done, o); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", name, err)
		}
		if _, err := Estimate(done, o); !errors.Is(err, context.Canceled) {
			t.Errorf("Estimate of %s: got %v, want context.Canceled", name, err)
		}
	}
	if err := AddPassagesContext(done, &Dataset{Conversations: []Conversation{{Turns: []Turn{{Text: "q"}}}}},
		PassageOptions{Count: 2, ISL: 8}); !errors.Is(err, context.Canceled) {
		t.Errorf("passages: got %v, want context.Canceled", err)
	}

	for _, endless := range []bool{true, false} {
		t.Run(fmt.Sprintf("fifo endless=%v", endless), func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), "trace.jsonl")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wrote := make(chan struct{})
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err != nil {
					close(wrote)
					return
				}
				defer w.Close()
				line := []byte(`{"input_length": 10, "output_length": 5}` + "\n")
				for i := 0; ; i++ {
					if i == 1000 {
						close(wrote)
						if !endless {
							<-ctx.Done() // stall: the reader blocks in Read
							return
						}
					}
					if _, err := w.Write(line); err != nil {
						return // the reader closed the FIFO
					}
				}
			}()
			result := make(chan error, 1)
			go func() {
				_, _, err := LoadContext(ctx, Options{InputFile: fifo, CustomDatasetType: TypeMooncake})
				result <- err
			}()
			<-wrote
			cancel()
			select {
			case err := <-result:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("got %v, want context.Canceled", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the load did not stop within 20 s of the cancel")
			}
		})
	}
}

// TestLongTraceLoadStopsAtOnce: loading the trace of the most blocks the
// limits allow (2,000 rows at the token limit) stops within a second of an
// interrupt (the bound a run keeps in every phase), wherever it is; a
// check every 32 rows keeps it to milliseconds on an idle machine, the
// second allows for a busy one under the race detector.
func TestLongTraceLoadStopsAtOnce(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 8}`+"\n", i, MaxRequestTokens)
	}
	trace := writeFile(t, "long.jsonl", b.String())
	for _, after := range []time.Duration{time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		result := make(chan error, 1)
		go func() {
			_, _, err := LoadContext(ctx, Options{InputFile: trace, CustomDatasetType: TypeMooncake})
			result <- err
		}()
		time.Sleep(after)
		cancel()
		stopped := time.Now()
		err := <-result
		if el := time.Since(stopped); el > time.Second {
			t.Errorf("cancelled after %s: the load went on %s", after, el)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled after %s: %v", after, err)
		}
	}
}
