package hostile

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/internal/bounded"
)

// Case is one misbehaviour: a server's answer or a file, made in a
// surface's sandbox, and what it asks of the surface beyond the
// properties every case checks.
type Case struct {
	// Name names it ("redirect to another port").
	Name string
	// Needs is what a surface must read for the case to apply to it.
	Needs Kind
	// TLS: the case's server (Env.URL) speaks https.
	TLS bool
	// Setup makes the hostile input: for a server case the answer to the
	// requests the surface's Hostile matches (Env.Answer) and any other
	// server (Env.Away); for a file case the file at Env.Path.
	Setup func(t *testing.T, e *Env, s *Surface)
	// Bounded: the input is over any bound, so the surface's Limit is
	// named in what it prints, and what it read of the body stops near it.
	Bounded bool
	// Endless: the input never ends. A surface with a Bound must end
	// within it; one without is sent SIGINT once it reads the input.
	Endless bool
	// Interrupt: SIGINT once the surface asked for the input, whatever its
	// Bound: it exits 130 within InterruptWithin (unless it had already
	// ended on its own, having no use for the rest).
	Interrupt bool
	// InterruptAfter, when set, sends SIGINT that long after the start if
	// the command still runs (it may wait on the input, as a reader of a
	// stream waits on a FIFO's writer: it must then exit 130 at once).
	InterruptAfter time.Duration
	// MayPass: exit 0 is as right as the surface's failure codes (the
	// input is odd but usable).
	MayPass bool
	// NamesFile: what the surface prints names the file (escaped).
	NamesFile bool
	// Applies, when set, says whether the case applies to a surface that
	// reads what it Needs.
	Applies func(s *Surface) bool
	// Check, when set, asserts what is the case's own.
	Check func(t *testing.T, e *Env, o *Outcome)
}

// InterruptWithin is how soon after SIGINT a command must exit 130.
const InterruptWithin = 5 * time.Second

// Answer makes h answer the requests the surface's Hostile matches.
func (e *Env) Answer(h http.Handler) { e.hostile.Store(&h) }

// Away starts another origin for this case at host ("127.0.0.1" for
// another port, "127.0.0.2" for another host on the case server's port),
// which records every request it is sent (no secret may be among them)
// and answers as the surface's well-behaved server. It returns its base
// URL, "" when host cannot be bound here.
func (e *Env) Away(t *testing.T, host string, samePort bool) string {
	t.Helper()
	port := "0"
	if samePort {
		_, port, _ = net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(e.URL, "https://"), "http://"))
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return ""
	}
	rec := Record(e.good)
	srv := newServer(t, ln, rec, false)
	rec.URL = srv
	e.aways = append(e.aways, rec)
	return srv
}

// plainAway is an http server an https case redirects to: nothing may
// reach it.
func (e *Env) plainAway(t *testing.T) string {
	u := e.Away(t, "127.0.0.1", false)
	e.plain = e.aways[len(e.aways)-1]
	return u
}

// Cases are every misbehaviour the kit has.
var Cases = []Case{
	// Redirects: the away server answers as the real one would, so a
	// surface that follows may pass, but no secret may reach it.
	{Name: "redirect to another host", Needs: Server, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		away := e.Away(t, "127.0.0.2", true)
		if away == "" {
			t.Skip("127.0.0.2 cannot be bound here")
		}
		e.Answer(Redirect(away))
	}},
	{Name: "redirect to another port", Needs: Server, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Redirect(e.Away(t, "127.0.0.1", false)))
	}},
	{Name: "redirect from https to http", Needs: Server, TLS: true, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Redirect(e.plainAway(t)))
	}},
	{Name: "redirect loop", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Redirect(e.URL))
	}},
	{Name: "slow drip", Needs: Server, Endless: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Endless(e.cap(), 0, 200*time.Millisecond))
	}},
	{Name: "stalled and interrupted", Needs: Server, Interrupt: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Stall())
	}},
	{Name: "huge body with Content-Length", Needs: Server, Bounded: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Endless(e.cap(), 8<<30, 0))
	}},
	{Name: "endless body", Needs: Server, Bounded: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Endless(e.cap(), 0, 0))
	}},
	{Name: "endless rows", Needs: Server, MayPass: true, Applies: func(s *Surface) bool { return s.Rows != "" },
		Setup: func(t *testing.T, e *Env, s *Surface) {
			e.Answer(Repeat(s.Rows, e.cap()))
		}},
	{Name: "HTML instead of JSON", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(HTML())
	}},
	{Name: "escapes in an error", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Status(http.StatusInternalServerError, "",
			Fill(`{"error":{"message":"failed {{esc}}","type":"{{esc}}","code":500},"detail":"{{esc}}","message":"{{esc}}"}`)))
	}},
	{Name: "escapes in an answer", Needs: Server, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Status(http.StatusOK, "", e.escaped(t, s)))
	}},
	{Name: "503 storm", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Status(http.StatusServiceUnavailable, "1", `{"error":{"message":"overloaded","type":"server_error","code":503}}`))
	}},
	{Name: "429 storm", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Status(http.StatusTooManyRequests, "3600", `{"error":{"message":"rate limited","type":"rate_limit","code":429}}`))
	}},
	{Name: "closed mid-body", Needs: Server, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(CloseMidBody())
	}},
	// The tool loop: a reply is only tool calls, again and again.
	{Name: "giant tool call", Needs: Server | ToolCalls, Bounded: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(ToolCallAnswers(ToolCallOptions{ArgBytes: 20 << 20, Calls: 1, ID: func(i int) string { return fmt.Sprintf("call_%d", i) }}))
	}},
	{Name: "endless tool calls", Needs: Server | ToolCalls, Bounded: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(ToolCallAnswers(ToolCallOptions{ArgBytes: 16, Calls: 10000, ID: func(int) string { return "" }}))
	}},
	{Name: "duplicate and huge tool call ids", Needs: Server | ToolCalls, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		huge := strings.Repeat("i", 1<<20)
		e.Answer(ToolCallAnswers(ToolCallOptions{ArgBytes: 16, Calls: 3, ID: func(i int) string {
			if i == 2 {
				return huge
			}
			return "same"
		}}))
	}},

	// Parquet files a dataset reads.
	{Name: "2 GiB junk Parquet", Needs: Server | Parquet, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(Junk(2 << 30))
	}, Check: func(t *testing.T, e *Env, o *Outcome) {
		if o.Served > 8<<20 {
			t.Errorf("%s of a junk file was downloaded", bounded.Bytes(o.Served))
		}
	}},
	{Name: "80 MiB Parquet row", Needs: Server | Parquet, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.Answer(ServeFile(HugeRowParquet(t, 80<<20)))
	}, Check: func(t *testing.T, e *Env, o *Outcome) {
		if !strings.Contains(o.Output, "64 MiB") {
			t.Errorf("the refusal does not name the 64 MiB bound of a row")
		}
	}},

	// Files.
	{Name: "symlink to /dev/zero", Needs: File, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		DevZeroLink(t, e.Path)
	}},
	// A FIFO nobody writes: refused (a whole-file reader), or waited on
	// (a dataset read as a stream, <(cmd)) until SIGINT ends the wait.
	{Name: "FIFO", Needs: File, NamesFile: true, InterruptAfter: 3 * time.Second, Setup: func(t *testing.T, e *Env, s *Surface) {
		FIFO(t, e.Path)
	}},
	{Name: "directory", Needs: File, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		if err := os.Mkdir(e.Path, 0o755); err != nil {
			t.Fatal(err)
		}
	}},
	{Name: "huge file", Needs: File, Bounded: true, NamesFile: true, Applies: notSQLite, Setup: func(t *testing.T, e *Env, s *Surface) {
		Huge(t, e.Path, s.Limit+1<<20)
	}},
	{Name: "garbage", Needs: File, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		Garbage(t, e.Path, 4096)
	}},
	{Name: "empty file", Needs: File, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		write(t, e.Path, nil)
	}},
	{Name: "escapes in the name", Needs: File, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		// The folder's name carries the escapes: a surface's file has a
		// fixed name.
		dir := filepath.Join(filepath.Dir(filepath.Dir(e.Path)), "in"+Escapes)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Skipf("a name with escapes: %v", err)
		}
		e.Path = filepath.Join(dir, filepath.Base(e.Path))
		Garbage(t, e.Path, 512)
	}},
	{Name: "escapes in the content", Needs: File, MayPass: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		write(t, e.Path, []byte(e.escaped(t, s)))
	}},
	{Name: "damaged SQLite", Needs: File | SQLite, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		DamagedSQLite(t, e.Path)
	}},
	{Name: "foreign SQLite", Needs: File | SQLite, NamesFile: true, Setup: func(t *testing.T, e *Env, s *Surface) {
		e.foreign = ForeignSQLite(t, e.Path)
	}, Check: func(t *testing.T, e *Env, o *Outcome) {
		b, err := bounded.ReadFile(t.Context(), e.Path, 1<<20)
		if err != nil || !bytes.Equal(b, e.foreign) {
			t.Errorf("another application's database was changed (%v)", err)
		}
		for _, side := range []string{"-wal", "-shm", "-journal"} {
			if _, err := os.Stat(e.Path + side); err == nil {
				t.Errorf("another application's database got a %s file", side)
			}
		}
	}},
}

// notSQLite: a database is not read whole, its size is no input's.
func notSQLite(s *Surface) bool { return s.Reads&SQLite == 0 }

// escaped is the surface's input with escapes (Surface.Escaped).
func (e *Env) escaped(t *testing.T, s *Surface) string {
	if s.Escaped != nil {
		return s.Escaped(t, e)
	}
	return Fill(GenericEscaped)
}

// cap is how much an endless answer sends at most: past the surface's
// limit by more than any socket buffers, so a surface that reads past
// its bound is seen to.
func (e *Env) cap() int64 { return e.limit + 64<<20 }
