// Package sse reads text/event-stream responses (server-sent events) on the
// load generator's hot path.
//
// Reader follows the WHATWG HTML "event stream interpretation" rules: lines
// end in CR, LF or CRLF (a CRLF split across two reads is one terminator),
// one leading UTF-8 BOM is skipped, lines starting with ':' are comments, a
// field without a colon has an empty value, exactly one space after the colon
// is stripped, data lines are joined with "\n", a blank line dispatches, and
// an event with no data line is dropped. "id" and "retry" are skipped (a
// benchmark never reconnects) and unknown fields are ignored, but for
// "error": llama.cpp's server sent its in-stream errors as an `error:` field
// line (until September 2025), which the spec would drop with its event, so
// the Reader dispatches such an event with type "error", the field's value
// as its data and Event.ErrorField set. At the end of the stream, an
// event whose data lines came without the blank line after them is
// dispatched (Event.AtEOF) where the spec would drop it: koboldcpp ends
// its streams with `data: [DONE]` and no newline, distributed-llama with
// no blank line; an unterminated last line counts as a data line unless
// it ends inside a UTF-8 sequence. Two more deliberate departures:
// bytes are passed through as they are, without replacing invalid UTF-8
// with U+FFFD (JSON decoding downstream rejects it anyway), and an empty
// event type is reported as nil rather than "message".
//
// The Reader reads with one large buffer (64 KiB by default) and parses
// every event it holds before reading again. An event with one data line that
// arrived whole is returned as a slice of that buffer; multi-line data is
// joined in a reused scratch buffer, so the steady state allocates nothing.
// A line or an event's data longer than MaxEventSize ends the stream with
// ErrEventTooLarge instead of growing memory without bound.
//
// Timestamps: now is called once per Read that returns bytes, before they
// are parsed. Every event completed by that Read carries the reading in
// Event.ReadAt, and in Event.At the source's arrival stamp for that Read
// when the source has one (Stamped: a socket with kernel receive times),
// else the reading again (see Reader).
//
// Cost, measured with BenchmarkReader on the 2-core dev box (Intel Xeon,
// go1.26, ≈ 210-byte OpenAI chat.completion.chunk events, 0 allocs/op):
//
//	1 event per Read,  counter clock     ≈ 66 ns/event  (≈ 15 M events/s)
//	1 event per Read,  time.Since clock  ≈ 84 ns/event  (≈ 12 M events/s)
//	16 events per Read, either clock     ≈ 44 ns/event  (≈ 22 M events/s)
//	CRLF, event type + 3 data lines      ≈ 145 ns/event (copy path, 4 per Read)
//
// (best of three 1 s runs; the shared box's load makes single runs vary by
// up to 2×.)
//
// Over a real socket the Read syscall dominates: read with a large buffer.
package sse
