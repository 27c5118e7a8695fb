package hf

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/surgebench/surge/datasets/tokenizer/hub"
	"github.com/surgebench/surge/internal/bounded"
)

// Format is a data file's format.
type Format uint8

// The formats surge reads rows from.
const (
	// JSON is a JSON array of row objects, or JSON Lines under a .json
	// name (the datasets library reads both).
	JSON Format = iota + 1
	JSONLines
	CSV
	TSV
	Parquet
)

// String names the format.
func (f Format) String() string {
	switch f {
	case JSON:
		return "JSON"
	case JSONLines:
		return "JSON Lines"
	case CSV:
		return "CSV"
	case TSV:
		return "TSV"
	case Parquet:
		return "Parquet"
	}
	return "unknown"
}

// Bounds on what a data file may hold.
const (
	// MaxRowBytes bounds one row: a JSON line or value, a CSV line. Rows
	// carry whole images and audio clips, so it is larger than a text
	// dataset's line bound.
	MaxRowBytes = 64 << 20
	// DefaultMaxFileBytes bounds one data file's download when the
	// options give no bound: the Hub shards datasets into files of a few
	// hundred MB.
	DefaultMaxFileBytes = 4 << 30
	// parquetBatch is how many rows of a row group are decoded at once.
	parquetBatch = 64
)

// Row is one row of a dataset: its columns' values as JSON has them
// (string, int64, float64, bool, nil, []any, map[string]any), and []byte
// or string for binary columns (image and audio bytes).
type Row map[string]any

// ErrStop, returned by a row callback, ends Read early and without error.
var ErrStop = errors.New("hf: stop reading")

// ReadOptions shape Read.
type ReadOptions struct {
	// Columns, when set, are the only top-level columns read from a
	// Parquet file (the others are not decoded). Missing ones are an
	// *Error naming the columns there are.
	Columns []string
}

// Read reads the plan's rows in file order, handing each to fn with its
// file and its row number there (from 1), until fn returns ErrStop (nil is
// returned) or an error (returned), or the files end. Files are opened
// through the Hub cache at the plan's revision as they are reached:
// JSON, JSON Lines and CSV read as they download (a file left before its
// end is not kept), Parquet downloaded whole and read a row group at a
// time. o.MaxBytes bounds each file (0: DefaultMaxFileBytes).
func Read(ctx context.Context, plan *Plan, o hub.Options, ro ReadOptions, fn func(file string, n int, r Row) error) error {
	o.Revision = plan.Revision
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxFileBytes
	}
	for _, f := range plan.Files {
		err := readFile(ctx, plan, f.Path, o, ro, fn)
		if errors.Is(err, ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readFile(ctx context.Context, plan *Plan, file string, o hub.Options, ro ReadOptions, fn func(file string, n int, r Row) error) error {
	format, ok := FormatOf(file)
	if !ok {
		return &Error{Dataset: plan.Repo, File: file, Msg: "not a JSON, JSON Lines, CSV or Parquet file", Fix: "surge reads those formats only"}
	}
	n := 0
	each := func(r Row) error {
		n++
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(file, n, r)
	}
	bad := func(err error) error {
		var he *Error
		if errors.Is(err, ErrStop) || errors.As(err, &he) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &Error{Dataset: plan.Repo, File: file, Row: n + 1, Msg: err.Error(), Fix: "surge reads " + format.String() + " files of one row an object", Err: err}
	}
	if format == Parquet {
		f, _, err := hub.OpenAt(ctx, hub.Dataset, plan.Repo, file, o)
		if errors.Is(err, hub.ErrNoRanges) {
			// A small file, or a mirror that answers no range request:
			// the file whole, kept in the cache.
			if _, _, err = hub.Fetch(ctx, hub.Dataset, plan.Repo, file, o); err == nil {
				f, _, err = hub.OpenAt(ctx, hub.Dataset, plan.Repo, file, o)
			}
		}
		if err != nil {
			return hubError(plan.Source, file, "downloading it", err)
		}
		defer f.Close()
		return readParquet(f, f.Size(), plan.Repo, file, ro.Columns, each)
	}
	rc, _, err := hub.Open(ctx, hub.Dataset, plan.Repo, file, o)
	if err != nil {
		return hubError(plan.Source, file, "downloading it", err)
	}
	defer rc.Close()
	var r io.Reader = rc
	if strings.HasSuffix(strings.ToLower(file), ".gz") {
		zr, err := gzip.NewReader(rc)
		if err != nil {
			return bad(fmt.Errorf("not gzip: %v", err))
		}
		defer zr.Close()
		r = &capped{r: zr, left: o.MaxBytes, limit: o.MaxBytes}
	}
	switch format {
	case JSON, JSONLines:
		err = readJSON(r, format, each)
	case CSV, TSV:
		err = readCSV(r, format, each)
	}
	if err != nil {
		return bad(err)
	}
	// Read to its end: the download is whole, and Close keeps it.
	_, _ = io.Copy(io.Discard, rc)
	return nil
}

// capped fails once more than left bytes were read (a gzip bomb).
type capped struct {
	r           io.Reader
	left, limit int64
}

func (c *capped) Read(b []byte) (int, error) {
	if c.left <= 0 {
		return 0, &bounded.TooLargeError{What: "the file once decompressed", Limit: c.limit}
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	return n, err
}

// readJSON reads a JSON array of objects, or JSON Lines (one object a
// line; a .json file that does not start with "[" is read so).
func readJSON(r io.Reader, format Format, each func(Row) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if format == JSON {
		for {
			b, err := br.Peek(1)
			if err != nil {
				if err == io.EOF {
					return errors.New("empty file")
				}
				return err
			}
			if b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n' || b[0] == 0xef || b[0] == 0xbb || b[0] == 0xbf {
				_, _ = br.ReadByte() // blanks and a byte-order mark
				continue
			}
			if b[0] == '[' {
				return readJSONArray(br, each)
			}
			break
		}
	}
	line := 0
	for {
		b, err := readLine(br)
		if len(b) > 0 {
			line++
			if len(bytes.TrimSpace(b)) > 0 {
				row, derr := decodeRow(b)
				if derr != nil && format == JSON && line == 1 {
					return errors.New("one JSON object over several lines, not a JSON array of rows or JSON Lines")
				}
				if derr != nil {
					return fmt.Errorf("line %d: %v", line, derr)
				}
				if err := each(row); err != nil {
					return err
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads a line of at most MaxRowBytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(out)+len(chunk) > MaxRowBytes {
			return nil, &bounded.TooLargeError{What: "a line", Limit: MaxRowBytes}
		}
		out = append(out, chunk...)
		if err != bufio.ErrBufferFull {
			return out, err
		}
	}
}

// decodeRow decodes one JSON object.
func decodeRow(b []byte) (Row, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return Row(numbers(m).(map[string]any)), nil
}

// readJSONArray reads the objects of a JSON array one at a time, none
// longer than MaxRowBytes.
func readJSONArray(br *bufio.Reader, each func(Row) error) error {
	lr := &windowed{r: br}
	d := json.NewDecoder(lr)
	d.UseNumber()
	if _, err := d.Token(); err != nil { // "["
		return fmt.Errorf("malformed JSON: %v", err)
	}
	for i := 1; d.More(); i++ {
		lr.limit = d.InputOffset() + MaxRowBytes
		var v any
		if err := d.Decode(&v); err != nil {
			if errors.Is(err, errRowTooLong) {
				return fmt.Errorf("element %d: %v", i, err)
			}
			return fmt.Errorf("element %d: malformed JSON: %v", i, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("element %d is not a JSON object", i)
		}
		if err := each(Row(numbers(m).(map[string]any))); err != nil {
			return err
		}
	}
	lr.limit = 0
	if _, err := d.Token(); err != nil { // "]"
		return fmt.Errorf("malformed JSON: %v", err)
	}
	return nil
}

var errRowTooLong = &bounded.TooLargeError{What: "a row", Limit: MaxRowBytes}

// windowed lets a JSON decoder read at most up to limit (an offset in
// the stream), so one value cannot grow without bound; 0: no limit.
type windowed struct {
	r     io.Reader
	n     int64
	limit int64
}

func (w *windowed) Read(b []byte) (int, error) {
	if w.limit > 0 {
		room := w.limit - w.n
		if room <= 0 {
			return 0, errRowTooLong
		}
		if int64(len(b)) > room {
			b = b[:room]
		}
	}
	n, err := w.r.Read(b)
	w.n += int64(n)
	return n, err
}

// numbers turns json.Number values into int64 or float64.
func numbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
	}
	return v
}

// readCSV reads a CSV (or TSV) file with a header row; every value is a
// string.
func readCSV(r io.Reader, format Format, each func(Row) error) error {
	cr := csv.NewReader(&lineCapped{r: r})
	if format == TSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	head, err := cr.Read()
	if err == io.EOF {
		return errors.New("empty file")
	}
	if err != nil {
		return fmt.Errorf("header: %v", err)
	}
	if len(head) > 0 {
		head[0] = strings.TrimPrefix(head[0], "\ufeff")
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		row := make(Row, len(head))
		for i, h := range head {
			row[h] = rec[i]
		}
		if err := each(row); err != nil {
			return err
		}
	}
}

// lineCapped fails on a line longer than MaxRowBytes (encoding/csv holds a
// whole record in memory).
type lineCapped struct {
	r   io.Reader
	run int64
}

func (l *lineCapped) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for _, c := range b[:n] {
		if c == '\n' {
			l.run = 0
		} else if l.run++; l.run > MaxRowBytes {
			return 0, errRowTooLong
		}
	}
	return n, err
}

// maxParquetFooter bounds a Parquet file's footer (its metadata: the
// schema and every row group's column chunks), read before any row.
const maxParquetFooter = 64 << 20

// readParquet reads a Parquet file a row group at a time, decoding only
// the columns asked for: its footer first (checked before it is read
// whole), then each row group as the rows are needed. A row over
// MaxRowBytes is refused, before its row group is read when the group's
// metadata shows it.
func readParquet(f io.ReaderAt, size int64, repo, file string, columns []string, each func(Row) error) (err error) {
	// The Parquet reader can panic on a corrupt file: that is bad input,
	// not a crash.
	defer func() {
		if r := recover(); r != nil {
			err = &Error{Dataset: repo, File: file, Msg: fmt.Sprintf("corrupt Parquet file: %v", r), Fix: "delete it from the Hugging Face cache to download it again"}
		}
	}()
	if err := parquetTail(f, size); err != nil {
		return &Error{Dataset: repo, File: file, Msg: "not a Parquet file: " + err.Error(), Fix: "surge reads Parquet files whose last bytes are PAR1", Err: err}
	}
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return &Error{Dataset: repo, File: file, Msg: fmt.Sprintf("not a Parquet file: %v", err), Fix: "delete it from the Hugging Face cache to download it again", Err: err}
	}
	schema := pf.Schema()
	var conv parquet.Conversion
	if len(columns) > 0 {
		group := parquet.Group{}
		var missing []string
		for _, c := range columns {
			if _, dup := group[c]; dup {
				continue
			}
			field := fieldOf(schema, c)
			if field == nil {
				missing = append(missing, c)
				continue
			}
			group[c] = field
		}
		if len(missing) > 0 {
			return &Error{Dataset: repo, File: file, Msg: fmt.Sprintf("no column %s", strings.Join(quoted(missing), ", ")),
				Fix: "its columns are " + strings.Join(fieldNames(schema), ", ")}
		}
		proj := parquet.NewSchema(schema.Name(), group)
		if conv, err = parquet.Convert(proj, schema); err != nil {
			return &Error{Dataset: repo, File: file, Msg: fmt.Sprintf("cannot read its columns: %v", err), Err: err}
		}
		schema = proj
	}
	buf := make([]parquet.Row, parquetBatch)
	n := 0
	meta := pf.Metadata()
	for gi, rg := range pf.RowGroups() {
		if gi < len(meta.RowGroups) {
			if avg := rowBytes(meta.RowGroups[gi], columns); avg > MaxRowBytes {
				return &Error{Dataset: repo, File: file, Row: n + 1, Msg: (&bounded.TooLargeError{What: fmt.Sprintf("row group %d's rows (%s each on average)", gi+1, bounded.Bytes(avg)), Limit: MaxRowBytes}).Error(),
					Fix: "surge reads rows of at most " + bounded.Bytes(MaxRowBytes)}
			}
		}
		if conv != nil {
			rg = parquet.ConvertRowGroup(rg, conv)
		}
		rows := rg.Rows()
		for {
			k, rerr := rows.ReadRows(buf)
			for _, row := range buf[:k] {
				n++
				var v any
				if err := schema.Reconstruct(&v, row); err != nil {
					rows.Close()
					return &Error{Dataset: repo, File: file, Row: n, Msg: fmt.Sprintf("cannot decode the row: %v", err), Err: err}
				}
				if size := valueBytes(v); size > MaxRowBytes {
					rows.Close()
					return &Error{Dataset: repo, File: file, Row: n, Msg: (&bounded.TooLargeError{What: "the row", Limit: MaxRowBytes, Size: size}).Error(),
						Fix: "surge reads rows of at most " + bounded.Bytes(MaxRowBytes)}
				}
				m, _ := v.(map[string]any)
				if err := each(Row(m)); err != nil {
					rows.Close()
					return err
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rows.Close()
				return &Error{Dataset: repo, File: file, Row: n + 1, Msg: rerr.Error(), Fix: "delete it from the Hugging Face cache to download it again", Err: rerr}
			}
		}
		rows.Close()
	}
	return nil
}

// parquetTail checks a Parquet file's last 8 bytes, the footer's length
// and "PAR1", before a reader reads the footer that length says.
func parquetTail(f io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes", size)
	}
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(tail[4:]) != "PAR1" {
		return errors.New("its last bytes are not PAR1")
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	switch {
	case footer > size-12:
		return fmt.Errorf("its footer says it is %d bytes long, more than the file", footer)
	case footer > maxParquetFooter:
		return &bounded.TooLargeError{What: "its footer", Limit: maxParquetFooter, Size: footer}
	}
	return nil
}

// rowBytes is a row group's rows' average size, uncompressed, in the
// columns read (all when columns is empty).
func rowBytes(rg format.RowGroup, columns []string) int64 {
	if rg.NumRows <= 0 {
		return 0
	}
	var total int64
	for _, c := range rg.Columns {
		path := c.MetaData.PathInSchema
		if len(columns) > 0 && (len(path) == 0 || !slices.Contains(columns, path[0])) {
			continue
		}
		total += c.MetaData.TotalUncompressedSize
	}
	return total / rg.NumRows
}

// valueBytes is the bytes a decoded value holds in its strings and byte
// slices.
func valueBytes(v any) int64 {
	switch v := v.(type) {
	case string:
		return int64(len(v))
	case []byte:
		return int64(len(v))
	case map[string]any:
		var n int64
		for k, e := range v {
			n += int64(len(k)) + valueBytes(e)
		}
		return n
	case []any:
		var n int64
		for _, e := range v {
			n += valueBytes(e)
		}
		return n
	}
	return 8
}

func fieldOf(s *parquet.Schema, name string) parquet.Field {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

func fieldNames(s *parquet.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name())
	}
	return out
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}
