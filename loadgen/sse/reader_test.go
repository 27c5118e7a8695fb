package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// ev is an event as the tests compare it. EOF is Event.AtEOF.
type ev struct {
	Type string
	Data string
	EOF  bool
}

// chunkReader returns its chunks one per Read (a chunk larger than the
// caller's buffer is split), and io.EOF with the last one when eofWithData.
type chunkReader struct {
	chunks      [][]byte
	eofWithData bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	if len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if c.eofWithData && len(c.chunks) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func chunksOf(s ...string) *chunkReader {
	c := &chunkReader{}
	for _, x := range s {
		c.chunks = append(c.chunks, []byte(x))
	}
	return c
}

// sizedReader cuts in into reads whose sizes cycle through sizes.
func sizedReader(in []byte, sizes []int, eofWithData bool) *chunkReader {
	c := &chunkReader{eofWithData: eofWithData}
	for i := 0; len(in) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(in))
		c.chunks = append(c.chunks, in[:n])
		in = in[n:]
	}
	return c
}

// collect reads every event of rd until an error.
func collect(t testing.TB, rd *Reader) ([]ev, error) {
	t.Helper()
	var out []ev
	for i := 0; ; i++ {
		e, err := rd.Next()
		if err != nil {
			return out, err
		}
		if e.Type != nil && len(e.Type) == 0 {
			t.Fatalf("event %d: Type is empty but not nil", i)
		}
		if e.Data == nil {
			t.Fatalf("event %d: Data is nil", i)
		}
		out = append(out, ev{string(e.Type), string(e.Data), e.AtEOF})
		if i > 1<<20 {
			t.Fatal("too many events")
		}
	}
}

func counter() func() int64 {
	var n int64
	return func() int64 { n++; return n }
}

// deliveries are the ways each table case is fed to the Reader.
var deliveries = []struct {
	name string
	wrap func(string) io.Reader
	opts []Option
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }, nil},
	{"one-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }, nil},
	{"half", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }, nil},
	{"data-err", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }, nil},
	{"sizes-3-7-1", func(s string) io.Reader { return sizedReader([]byte(s), []int{3, 7, 1}, true) }, nil},
	{"buf-4", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }, []Option{BufferSize(4)}},
	{"buf-1-one-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }, []Option{BufferSize(1)}},
}

func TestReaderSpec(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2<<20)
	tests := []struct {
		name string
		in   string
		max  int // MaxEventSize, 0 = default
		want []ev
		err  error
	}{
		{name: "empty stream", in: "", err: io.EOF},
		{name: "one event LF", in: "data: hello\n\n", want: []ev{{"", "hello", false}}, err: io.EOF},
		{name: "one event CR", in: "data: hello\r\r", want: []ev{{"", "hello", false}}, err: io.EOF},
		{name: "one event CRLF", in: "data: hello\r\n\r\n", want: []ev{{"", "hello", false}}, err: io.EOF},
		{name: "mixed terminators", in: "data: a\rdata: b\ndata: c\r\n\r\ndata: d\n\r", want: []ev{{"", "a\nb\nc", false}, {"", "d", false}}, err: io.EOF},
		{name: "CRLF is one terminator, LFCR two", in: "data: a\n\rdata: b\r\n\n", want: []ev{{"", "a", false}, {"", "b", false}}, err: io.EOF},
		{name: "leading BOM stripped", in: "\xEF\xBB\xBFdata: x\n\n", want: []ev{{"", "x", false}}, err: io.EOF},
		{name: "only one BOM stripped", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", want: []ev{{"", "y", false}}, err: io.EOF},
		{name: "BOM alone", in: "\xEF\xBB\xBF", err: io.EOF},
		{name: "BOM prefix is a field", in: "\xEF\xBB", err: io.ErrUnexpectedEOF},
		{name: "BOM later is not stripped", in: "data: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []ev{{"", "a", false}}, err: io.EOF},
		{name: "comments ignored", in: ": hi\n:\ndata: a\n: mid\ndata: b\n\n: bye\n", want: []ev{{"", "a\nb", false}}, err: io.EOF},
		{name: "unterminated comment at end is clean", in: "data: a\n\n: keepal", want: []ev{{"", "a", false}}, err: io.EOF},
		{name: "no space after colon", in: "data:x\n\n", want: []ev{{"", "x", false}}, err: io.EOF},
		{name: "exactly one space stripped", in: "data:  x \n\n", want: []ev{{"", " x ", false}}, err: io.EOF},
		{name: "tab is not stripped", in: "data:\tx\n\n", want: []ev{{"", "\tx", false}}, err: io.EOF},
		{name: "colon inside value kept", in: "data: a: b:c\n\n", want: []ev{{"", "a: b:c", false}}, err: io.EOF},
		{name: "field without colon is empty data", in: "data\n\n", want: []ev{{"", "", false}}, err: io.EOF},
		{name: "empty data value dispatches", in: "data:\n\n", want: []ev{{"", "", false}}, err: io.EOF},
		{name: "two empty data lines", in: "data\ndata\n\n", want: []ev{{"", "\n", false}}, err: io.EOF},
		{name: "multi-line data joined", in: "data: {\ndata: \"a\": 1\ndata: }\n\n", want: []ev{{"", "{\n\"a\": 1\n}", false}}, err: io.EOF},
		{name: "event type", in: "event: delta\ndata: x\n\n", want: []ev{{"delta", "x", false}}, err: io.EOF},
		{name: "event type after data, last wins", in: "data: x\nevent: a\nevent: b\n\n", want: []ev{{"b", "x", false}}, err: io.EOF},
		{name: "event type resets per event", in: "event: a\ndata: 1\n\ndata: 2\n\n", want: []ev{{"a", "1", false}, {"", "2", false}}, err: io.EOF},
		{name: "event type of undispatched event dropped", in: "event: a\n\ndata: 2\n\n", want: []ev{{"", "2", false}}, err: io.EOF},
		{name: "empty event type is nil", in: "event\ndata: x\n\nevent:\ndata: y\n\n", want: []ev{{"", "x", false}, {"", "y", false}}, err: io.EOF},
		{name: "id and retry skipped", in: "id: 7\nretry: 1000\nretry: x\nid\ndata: x\n\n", want: []ev{{"", "x", false}}, err: io.EOF},
		{name: "unknown and miscased fields ignored", in: "Data: no\n data: no\nfoo: bar\ndata: yes\n\n", want: []ev{{"", "yes", false}}, err: io.EOF},
		{name: "blank lines between events", in: "\n\n\r\ndata: a\n\n\n\ndata: b\n\n", want: []ev{{"", "a", false}, {"", "b", false}}, err: io.EOF},
		{name: "event without data not dispatched", in: "event: ping\nid: 1\n\n", err: io.EOF},
		// The end of the stream completes an event whose data lines came
		// (real servers end so: koboldcpp with no newline at all,
		// distributed-llama with CRLF and no blank line); whether its data
		// is whole is the caller's to judge.
		{name: "end after a data line", in: "data: a\n\ndata: b\n", want: []ev{{"", "a", false}, {"", "b", true}}, err: io.EOF},
		{name: "end inside a data line", in: "data: a\n\ndata: b", want: []ev{{"", "a", false}, {"", "b", true}}, err: io.EOF},
		{name: "koboldcpp's end", in: "data: {}\n\ndata: [DONE]", want: []ev{{"", "{}", false}, {"", "[DONE]", true}}, err: io.EOF},
		{name: "distributed-llama's end", in: "data: {}\r\n\r\ndata: [DONE]\r\n", want: []ev{{"", "{}", false}, {"", "[DONE]", true}}, err: io.EOF},
		{name: "end after a CR data line", in: "data: a\rdata: b\r", want: []ev{{"", "a\nb", true}}, err: io.EOF},
		{name: "end inside the second data line", in: "event: x\ndata: a\ndata: b", want: []ev{{"x", "a\nb", true}}, err: io.EOF},
		{name: "end inside an error line", in: "error: {\"code\":500}", want: []ev{{"error", `{"code":500}`, true}}, err: io.EOF},
		{name: "end after an empty data line", in: "data", want: []ev{{"", "", true}}, err: io.EOF},
		{name: "end after a whole multi-byte character", in: "data: \xe4\xb8\xad", want: []ev{{"", "\xe4\xb8\xad", true}}, err: io.EOF},
		{name: "end after an invalid byte", in: "data: a\xff", want: []ev{{"", "a\xff", true}}, err: io.EOF},
		{name: "end inside a UTF-8 sequence", in: "data: a\n\ndata: \xe4\xb8", want: []ev{{"", "a", false}}, err: io.ErrUnexpectedEOF},
		{name: "end inside a 4-byte sequence", in: "data: \xf0\x9f\x98", err: io.ErrUnexpectedEOF},
		{name: "end inside a field name", in: "data: a\n\ndat", want: []ev{{"", "a", false}}, err: io.ErrUnexpectedEOF},
		{name: "end inside an event line", in: "data: a\nevent: x", err: io.ErrUnexpectedEOF},
		{name: "end after id line", in: "id: 1\n", err: io.ErrUnexpectedEOF},
		{name: "end after event line", in: "event: done\n", err: io.ErrUnexpectedEOF},
		{name: "end after comment inside event", in: "data: a\n: c", want: []ev{{"", "a", true}}, err: io.EOF},
		{name: "final CR ends the line", in: "data: a\r\r", want: []ev{{"", "a", false}}, err: io.EOF},
		{name: "2 MiB data line", in: "data: " + big + "\n\ndata: after\n\n", want: []ev{{"", big, false}, {"", "after", false}}, err: io.EOF},
		{name: "2 MiB comment", in: ":" + big + "\ndata: after\n\n", want: []ev{{"", "after", false}}, err: io.EOF},
		{name: "invalid UTF-8 passed through", in: "data: \xff\xfe\n\n", want: []ev{{"", "\xff\xfe", false}}, err: io.EOF},
		{name: "NUL bytes kept", in: "data: a\x00b\n\n", want: []ev{{"", "a\x00b", false}}, err: io.EOF},
		{name: "data at the limit", in: "data: 12345678\n\n", max: 14, want: []ev{{"", "12345678", false}}, err: io.EOF},
		{name: "line over the limit", in: "data: ok\n\ndata: 123456789\n\n", max: 14, want: []ev{{"", "ok", false}}, err: ErrEventTooLarge},
		{name: "unterminated line over the limit", in: "data: ok\n\n:123456789012345", max: 14, want: []ev{{"", "ok", false}}, err: ErrEventTooLarge},
		{name: "joined data over the limit", in: "data: 12345\ndata: 12345\ndata: 12345\n\n", max: 14, err: ErrEventTooLarge},
		{name: "many empty data lines over the limit", in: strings.Repeat("data\n", 20), max: 14, err: ErrEventTooLarge},
		// llama.cpp's server (b4747, examples/server/utils.hpp
		// server_sent_event) wrote its in-stream errors as an "error" field.
		{name: "error field is an error event", in: "data: a\n\nerror: {\"code\":500}\n\ndata: [DONE]\n\n",
			want: []ev{{"", "a", false}, {"error", `{"code":500}`, false}, {"", "[DONE]", false}}, err: io.EOF},
		{name: "error field replaces the data before it", in: "data: a\nevent: x\nerror: e\ndata: b\n\n", want: []ev{{"error", "e\nb", false}}, err: io.EOF},
		{name: "error field resets per event", in: "error: e\n\ndata: b\n\n", want: []ev{{"error", "e", false}, {"", "b", false}}, err: io.EOF},
		{name: "error field over the limit", in: "error: 123456789012345\n\n", max: 14, err: ErrEventTooLarge},
	}
	for _, tc := range tests {
		for _, d := range deliveries {
			t.Run(tc.name+"/"+d.name, func(t *testing.T) {
				t.Parallel()
				if len(tc.in) > 1<<20 && strings.Contains(d.name, "one-byte") {
					t.Skip("covered by the other deliveries; too slow a byte at a time under -race")
				}
				opts := d.opts
				if tc.max > 0 {
					opts = append(opts[:len(opts):len(opts)], MaxEventSize(tc.max))
				}
				rd := NewReader(d.wrap(tc.in), counter(), opts...)
				got, err := collect(t, rd)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				if !errors.Is(err, tc.err) {
					t.Errorf("error = %v, want %v", err, tc.err)
				}
				if _, err2 := rd.Next(); !errors.Is(err2, tc.err) {
					t.Errorf("second error = %v, want the same sticky %v", err2, tc.err)
				}
			})
		}
	}
}

// TestReaderErrorField checks that only an event from an "error" field line
// says so.
func TestReaderErrorField(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("event: error\ndata: x\n\nerror: y\n\n"), counter())
	var got []bool
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		got = append(got, e.ErrorField)
	}
	if want := []bool{false, true}; !slices.Equal(got, want) {
		t.Errorf("ErrorField = %v, want %v", got, want)
	}
}

// TestReaderSplitCR checks that a CR ending one read and the LF starting the
// next are one line terminator, not a line end plus an empty line (which
// would dispatch early).
func TestReaderSplitCR(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   []ev
	}{
		{"CR|LF inside event", []string{"data: a\r", "\ndata: b\r\n\r", "\n"}, []ev{{"", "a\nb", false}}},
		{"CR|LF dispatch", []string{"data: a\r\n\r", "\ndata: b\r\n\r\n"}, []ev{{"", "a", false}, {"", "b", false}}},
		{"CR|CR is a blank line", []string{"data: a\r", "\rdata: b\n\n"}, []ev{{"", "a", false}, {"", "b", false}}},
		{"CR|data", []string{"data: a\r", "data: b\r\r"}, []ev{{"", "a\nb", false}}},
		{"CR|empty reads|LF", []string{"data: a\r", "", "", "\n\n"}, []ev{{"", "a", false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(t, NewReader(chunksOf(tc.chunks...), counter()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if err != io.EOF {
				t.Errorf("error = %v, want io.EOF", err)
			}
		})
	}
}

// TestReaderCRDispatchesWithoutWaiting checks that an event whose blank line
// ends in CR is returned before the next byte arrives (no read past it).
func TestReaderCRDispatchesWithoutWaiting(t *testing.T) {
	t.Parallel()
	src := &chunkReader{chunks: [][]byte{[]byte("data: a\r\r")}}
	rd := NewReader(readFunc(func(p []byte) (int, error) {
		if len(src.chunks) == 0 {
			t.Fatal("Reader read past a complete event")
		}
		return src.Read(p)
	}), counter())
	e, err := rd.Next()
	if err != nil || string(e.Data) != "a" {
		t.Fatalf("Next = %q, %v", e.Data, err)
	}
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

func TestReaderTimestamps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		chunks []string
		want   []int64 // At per event; the clock counts reads
	}{
		{"one read, three events share it", []string{"data: a\n\ndata: b\n\ndata: c\n\n"}, []int64{1, 1, 1}},
		{"event split over reads takes the completing one", []string{"da", "ta: a\n", "\n"}, []int64{3}},
		{"event starts mid read", []string{"data: a\n\nda", "ta: b\n\n"}, []int64{1, 2}},
		{"comment before event", []string{": ping\n", "data: a\n\n"}, []int64{2}},
		{"unterminated comment", []string{": pi", "ng\n", "data: a\n\n"}, []int64{3}},
		{"blank lines", []string{"\n\n", "\r\n", "data: a\n\n"}, []int64{3}},
		{"event line then data", []string{"event: x\n", "data: a\n\n"}, []int64{2}},
		{"split BOM", []string{"\xEF", "\xBB\xBF", "data: a\n\n"}, []int64{3}},
		{"BOM then line in same read", []string{"\xEF", "\xBB\xBFdata: a\n\n"}, []int64{2}},
		{"BOM prefix that is not one", []string{"\xEF\xBB", "x\n", "data: a\n\n"}, []int64{3}},
		{"a byte at a time", strings.Split("data: a\n\ndata: b\n\n", ""), []int64{9, 18}},
		{"skipped LF of a split CRLF", []string{"data: a\r\n\r", "\ndata: b\n\n"}, []int64{1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			calls := 0
			var clock int64
			now := func() int64 { calls++; clock++; return clock }
			rd := NewReader(chunksOf(tc.chunks...), now, BufferSize(64))
			var got []int64
			for {
				e, err := rd.Next()
				if err != nil {
					if err != io.EOF {
						t.Fatalf("Next: %v", err)
					}
					break
				}
				got = append(got, e.At)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("At (-want +got):\n%s", diff)
			}
			nonEmpty := 0
			for _, c := range tc.chunks {
				if c != "" {
					nonEmpty++
				}
			}
			if calls != nonEmpty {
				t.Errorf("now called %d times, want once per non-empty read (%d)", calls, nonEmpty)
			}
		})
	}
}

func TestReaderReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name string
		src  io.Reader
		want []ev
		err  error
	}{
		{"timeout after first read", iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n\n")), []ev{{"", "a", false}, {"", "b", false}}, iotest.ErrTimeout},
		{"error at once", iotest.ErrReader(boom), nil, boom},
		{"error with data", readerWithErr("data: a\n\ndata: b", boom), []ev{{"", "a", false}}, boom},
		{"no progress", readFunc(func([]byte) (int, error) { return 0, nil }), nil, io.ErrNoProgress},
		{"bad count", readFunc(func(p []byte) (int, error) { return len(p) + 1, nil }), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(t, NewReader(tc.src, counter()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
				t.Fatalf("error = %v, want a read error", err)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("error = %v, want it to wrap %v", err, tc.err)
			}
		})
	}
}

func readerWithErr(s string, err error) io.Reader {
	done := false
	return readFunc(func(p []byte) (int, error) {
		if done {
			return 0, err
		}
		done = true
		return copy(p, s), err
	})
}

func TestReaderReset(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("data: a\ndata: b\nev"), counter(), BufferSize(16))
	if _, err := rd.Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("first stream: %v", err)
	}
	big := strings.Repeat("y", 100)
	rd.Reset(strings.NewReader("\xEF\xBB\xBFevent: e\ndata: " + big + "\n\n"))
	got, err := collect(t, rd)
	if diff := cmp.Diff([]ev{{"e", big, false}}, got); diff != "" || err != io.EOF {
		t.Errorf("after Reset (-want +got):\n%s err=%v", diff, err)
	}
	if e, err := NewReader(strings.NewReader("data: a\n\n"), nil).Next(); err != nil || e.At != 0 {
		t.Errorf("nil clock: At = %d, %v; want 0, nil", e.At, err)
	}
	rd.Reset(nil)
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("after Reset(nil): %v, want io.EOF", err)
	}
	rd.Reset(strings.NewReader("data: again\n\n"))
	got, err = collect(t, rd)
	if diff := cmp.Diff([]ev{{"", "again", false}}, got); diff != "" || err != io.EOF {
		t.Errorf("third stream (-want +got):\n%s err=%v", diff, err)
	}
}

// TestReaderHugeLineShrinksOnReset checks a pooled Reader does not keep a
// buffer that grew for one huge event.
func TestReaderHugeLineShrinksOnReset(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("data: "+strings.Repeat("z", 3<<20)+"\n\n"), counter())
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if len(rd.buf) <= DefaultBufferSize {
		t.Fatalf("buffer did not grow: %d", len(rd.buf))
	}
	rd.Reset(strings.NewReader(""))
	if len(rd.buf) != DefaultBufferSize {
		t.Errorf("buffer after Reset = %d bytes, want %d", len(rd.buf), DefaultBufferSize)
	}
}

// TestReaderHostileNoOOM feeds an endless line without a terminator and an
// endless event without a blank line: both must stop at the limit.
func TestReaderHostileNoOOM(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		unit string
	}{
		{"endless line", "x"},
		{"endless CR lines with data", "data: xxxxxxxx\r"},
		{"endless empty data lines", "data\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			unit := []byte(strings.Repeat(tc.unit, 4096/len(tc.unit)))
			read := 0
			src := readFunc(func(p []byte) (int, error) {
				if read > 64<<20 {
					t.Fatal("read 64 MiB without stopping")
				}
				n := copy(p, unit)
				read += n
				return n, nil
			})
			_, err := collect(t, NewReader(src, counter(), MaxEventSize(1<<20)))
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("error = %v, want ErrEventTooLarge", err)
			}
		})
	}
}

// TestReaderLinearScan checks that lines arriving a byte at a time and CR
// lines far from any LF are scanned in linear time (a quadratic rescan of
// 1 MiB would take minutes).
func TestReaderLinearScan(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		src  func(string) io.Reader
	}{
		{"long line a byte at a time", "data: " + strings.Repeat("a", 1<<20) + "\n\n",
			func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
		{"many CR lines then LF", strings.Repeat("data:a\r", 1<<19) + "\r\n",
			func(s string) io.Reader { return strings.NewReader(s) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(t, NewReader(tc.src(tc.in), counter(), BufferSize(4<<20)))
			if err != io.EOF || len(got) != 1 {
				t.Fatalf("got %d events, err %v", len(got), err)
			}
		})
	}
}

func TestReaderSteadyStateAllocs(t *testing.T) {
	chunk := []byte(strings.Repeat(openAIEvent, 3) + "event: x\ndata: a\ndata: b\r\n\r\n: ping\n")
	src := &loopReader{chunk: chunk}
	rd := NewReader(src, counter())
	for range 100 {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %.2f times per event, want 0", allocs)
	}
}

// refParse is the reference: the spec's algorithm applied line by line to
// the whole input at once, written for clarity, not speed.
func refParse(in []byte, maxEvent int) ([]ev, error) {
	in = bytes.TrimPrefix(in, bom)
	var (
		out     []ev
		data    []byte
		hasData bool
		typ     string
		pending bool
		errLine bool // an "error" field line (llama.cpp's) replaced the data
	)
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			if len(in) > maxEvent {
				return out, ErrEventTooLarge
			}
			if in[0] == ':' {
				break
			}
			// The last line counts when it is a data (or error) line
			// that does not end inside a UTF-8 sequence.
			field, value, _ := strings.Cut(string(in), ":")
			value = strings.TrimPrefix(value, " ")
			if field != "data" && field != "error" || refCutRune(value) {
				return out, io.ErrUnexpectedEOF
			}
			if field == "error" {
				data, errLine = nil, true
			}
			data, hasData = append(append(data, value...), '\n'), true
			if len(data)-1 > maxEvent {
				return out, ErrEventTooLarge
			}
			break
		}
		line := in[:i]
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			in = in[i+2:]
		} else {
			in = in[i+1:]
		}
		if len(line) > maxEvent {
			return out, ErrEventTooLarge
		}
		switch {
		case len(line) == 0:
			if hasData {
				t := typ
				if errLine {
					t = "error"
				}
				out = append(out, ev{t, string(data[:len(data)-1]), false})
			}
			data, hasData, typ, pending, errLine = nil, false, "", false, false
			continue
		case line[0] == ':':
			continue
		}
		pending = true
		field, value, found := strings.Cut(string(line), ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "data":
			data = append(append(data, value...), '\n')
			hasData = true
			if len(data)-1 > maxEvent {
				return out, ErrEventTooLarge
			}
		case "event":
			typ = value
		case "error":
			data, hasData, errLine = append([]byte(value), '\n'), true, true
			if len(data)-1 > maxEvent {
				return out, ErrEventTooLarge
			}
		}
	}
	switch {
	case hasData:
		t := typ
		if errLine {
			t = "error"
		}
		return append(out, ev{t, string(data[:len(data)-1]), true}), io.EOF
	case pending:
		return out, io.ErrUnexpectedEOF
	}
	return out, io.EOF
}

// refCutRune reports whether s ends inside a multi-byte UTF-8 sequence
// (as the standard library judges one whole: utf8.FullRune).
func refCutRune(s string) bool {
	for k := 1; k <= utf8.UTFMax && k <= len(s); k++ {
		if utf8.RuneStart(s[len(s)-k]) {
			return !utf8.FullRuneInString(s[len(s)-k:])
		}
	}
	return false
}

func TestRefParse(t *testing.T) {
	t.Parallel()
	// The reference must agree with the table too, or the fuzz test proves
	// nothing.
	got, err := refParse([]byte("\xEF\xBB\xBFevent: e\r\ndata:a\rdata\n\n: c\ndata: b\n"), 100)
	want := []ev{{"e", "a\n", false}, {"", "b", true}}
	if diff := cmp.Diff(want, got); diff != "" || err != io.EOF {
		t.Errorf("refParse (-want +got):\n%s err=%v", diff, err)
	}
}

// FuzzReader compares the Reader with refParse for random streams delivered
// in random read sizes, buffer sizes and limits.
func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: hello\n\n",
		"\xEF\xBB\xBFdata: a\r\ndata: b\r\n\r\n",
		"event: e\ndata\n\n: c\rdata:x\r\r",
		"data: a\r\n\r",
		"id: 1\nretry: 5\n\n",
		"data: 123456789012345678901234567890\n\n",
		": only a comment",
		"data: " + openAIEvent[6:],
		"\xEF\xBB",
		"error: {\"code\":500}\n\ndata: [DONE]\n\n",
		"data: a\nerror: b\ndata: c\nevent: x\n\n",
		"data: {}\n\ndata: [DONE]",
		"data: {}\r\n\r\ndata: [DONE]\r\n",
		"data: \xe4\xb8",
		"data: a\n\nevent: x",
	}
	for i, s := range seeds {
		f.Add([]byte(s), []byte{byte(i), 3, 1, 7}, uint8(i*5), uint16(i*9))
	}
	f.Fuzz(func(t *testing.T, in, sizes []byte, bufSize uint8, maxEvent uint16) {
		if len(in) > 1<<16 {
			return
		}
		limit := DefaultMaxEventSize
		if maxEvent > 0 {
			limit = int(maxEvent)
		}
		wantEv, wantErr := refParse(in, limit)
		rs := []int{1 << 20}
		for _, s := range sizes {
			rs = append(rs, int(s)%33+1)
		}
		if len(sizes) > 0 {
			rs = rs[1:]
		}
		eofWithData := len(sizes) > 0 && sizes[0]&1 == 1
		rd := NewReader(sizedReader(in, rs, eofWithData), counter(),
			BufferSize(int(bufSize)), MaxEventSize(int(maxEvent)))
		gotEv, gotErr := collect(t, rd)
		if diff := cmp.Diff(wantEv, gotEv); diff != "" {
			t.Errorf("events (-ref +reader):\n%s", diff)
		}
		if gotErr != wantErr {
			t.Errorf("error = %v, reference %v", gotErr, wantErr)
		}
	})
}

// openAIEvent is a typical chat completion chunk, ≈ 200 bytes.
const openAIEvent = `data: {"id":"chatcmpl-8d1f3a2b9c4e4f5a","object":"chat.completion.chunk","created":1733140000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}` + "\n\n"

// loopReader returns chunk on every Read, forever.
type loopReader struct{ chunk []byte }

func (l *loopReader) Read(p []byte) (int, error) { return copy(p, l.chunk), nil }

func benchmarkEvents(b *testing.B, perRead int, now func() int64) {
	benchmarkChunk(b, []byte(strings.Repeat(openAIEvent, perRead)), perRead, now)
}

// benchmarkChunk reads events from a source that returns chunk (holding
// perChunk events) on every Read.
func benchmarkChunk(b *testing.B, chunk []byte, perChunk int, now func() int64) {
	rd := NewReader(&loopReader{chunk: chunk}, now)
	b.SetBytes(int64(len(chunk) / perChunk))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e, err := rd.Next()
		if err != nil || len(e.Data) == 0 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReader reports the cost per event (ns/op is ns/event) of typical
// OpenAI chunks, with one event per Read (a server that flushes every token)
// and sixteen, with a trivial clock and a real monotonic one.
func BenchmarkReader(b *testing.B) {
	for _, perRead := range []int{1, 16} {
		b.Run(fmt.Sprintf("events-per-read=%d/clock=counter", perRead), func(b *testing.B) {
			benchmarkEvents(b, perRead, counter())
		})
		b.Run(fmt.Sprintf("events-per-read=%d/clock=monotonic", perRead), func(b *testing.B) {
			benchmarkEvents(b, perRead, monotonic())
		})
	}
	// The copy path: CRLF lines, an event type and data split over three
	// lines, as some servers send, four events per Read.
	multi := strings.Repeat("event: delta\r\ndata: {\"choices\":\r\ndata: [{\"delta\":{\"content\":\" the\"}}]\r\ndata: }\r\n\r\n", 4)
	b.Run("multiline-crlf/clock=counter", func(b *testing.B) {
		benchmarkChunk(b, []byte(multi), 4, counter())
	})
}

func monotonic() func() int64 {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }
}

// TestReaderRandomDifferential is FuzzReader's check over a fixed set of
// random streams built from the tokens that matter, so plain `go test`
// explores more than the seed corpus.
func TestReaderRandomDifferential(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"data", ":", " ", "\r", "\n", "\r\n", "event", "x", "\xEF\xBB\xBF", "\xEF", "id", "0"}
	for it := range 20000 {
		var in []byte
		for n := rng.IntN(40); n > 0; n-- {
			in = append(in, alpha[rng.IntN(len(alpha))]...)
		}
		sizes := make([]int, 1+rng.IntN(4))
		for i := range sizes {
			sizes[i] = 1 + rng.IntN(12)
		}
		bufSize, maxEvent := rng.IntN(20), rng.IntN(40)
		limit := DefaultMaxEventSize
		if maxEvent > 0 {
			limit = maxEvent
		}
		wantEv, wantErr := refParse(in, limit)
		rd := NewReader(sizedReader(in, sizes, rng.IntN(2) == 0), counter(), BufferSize(bufSize), MaxEventSize(maxEvent))
		gotEv, gotErr := collect(t, rd)
		if diff := cmp.Diff(wantEv, gotEv); diff != "" || gotErr != wantErr {
			t.Fatalf("case %d in=%q sizes=%v buf=%d max=%d: events (-ref +reader):\n%s error = %v, reference %v",
				it, in, sizes, bufSize, maxEvent, diff, gotErr, wantErr)
		}
	}
}

// stampedSource hands out its chunks and, for each, an arrival stamp.
type stampedSource struct {
	chunks []string
	stamps []int64
	i      int
}

func (s *stampedSource) Read(p []byte) (int, error) {
	if s.i >= len(s.chunks) {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[s.i])
	s.i++
	return n, nil
}

func (s *stampedSource) ArrivedAt() int64 { return s.stamps[s.i-1] }

func TestReaderArrivalStamps(t *testing.T) {
	t.Parallel()
	src := &stampedSource{
		chunks: []string{"data: a\n\n", "data: b\n\n", "data: c\n\n", "data: d\n", "\n"},
		// the clock reads 100, 200, ...: a stamp before the read wins, none
		// (0) or one after the read falls back to the read
		stamps: []int64{90, 0, 350, 380, 470},
	}
	var clock int64
	rd := NewReader(src, func() int64 { clock += 100; return clock }, BufferSize(64))
	type at struct{ At, ReadAt int64 }
	var got []at
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		got = append(got, at{e.At, e.ReadAt})
	}
	want := []at{{90, 100}, {200, 200}, {300, 300}, {470, 500}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stamps (-want +got):\n%s", diff)
	}
}

// TestLines reads newline-delimited JSON: one event per non-empty line,
// whatever its line ending, stamped by the read that completed it; a
// line cut off at the end is not an event.
func TestLines(t *testing.T) {
	t.Parallel()
	src := "{\"a\":1}\n\n{\"b\":\"data: x\"}\r\n{\"c\":3}\r{\"d\":"
	r := NewReader(strings.NewReader(src), func() int64 { return 7 }, Lines())
	var got []string
	for {
		ev, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("end: %v, want the unexpected end of the cut line", err)
			}
			break
		}
		if ev.At != 7 || ev.Type != nil {
			t.Errorf("event %q: at %d, type %q", ev.Data, ev.At, ev.Type)
		}
		got = append(got, string(ev.Data))
	}
	if want := []string{`{"a":1}`, `{"b":"data: x"}`, `{"c":3}`}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
