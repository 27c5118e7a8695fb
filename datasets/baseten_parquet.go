package datasets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// readBasetenParquet reads a Baseten trace in Parquet, a row group at a
// time. Errors name the row ("file: row 12: …"); the columns read are
// those of the JSON Lines form, whatever their integer or string types.
func readBasetenParquet(f *os.File, file string) (rows []BasetenRow, err error) {
	// The Parquet reader can panic on a corrupt file: that is bad input,
	// not a crash.
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, inputErrorf(file, 0, "corrupt Parquet file: %v", p)
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return nil, &InputError{File: file, Msg: fmt.Sprintf("cannot read the input file: %v", err), Err: err}
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, &InputError{File: file, Msg: fmt.Sprintf("not a Parquet file: %v", err), Err: err}
	}
	names := []string{"timestamp_start_unix_ms", "prompt", "input_tokens", "output_tokens",
		"provided_session_id", "poor_man_session_id", "duration_e2e_ms", "block_size"}
	col := map[int]string{}
	for i, n := range names {
		lc, ok := pf.Schema().Lookup(n)
		if !ok {
			if i < 4 {
				return nil, inputErrorf(file, 0, "missing required column %q", n)
			}
			continue
		}
		col[lc.ColumnIndex] = n
	}
	// total_hashes is a list: its leaf column is the list's element.
	for _, path := range [][]string{{"total_hashes", "list", "element"}, {"total_hashes", "list", "item"}, {"total_hashes", "array"}, {"total_hashes"}} {
		if lc, ok := pf.Schema().Lookup(path...); ok {
			col[lc.ColumnIndex] = "total_hashes"
			break
		}
	}
	buf := make([]parquet.Row, 64)
	n := 0
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		for {
			k, err := rr.ReadRows(buf)
			for _, row := range buf[:k] {
				n++
				r, err := basetenParquetRow(file, n, row, col)
				if err != nil {
					rr.Close()
					return nil, err
				}
				rows = append(rows, r)
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rr.Close()
				return nil, &InputError{File: file, Msg: fmt.Sprintf("row %d: %v", n+1, err), Err: err}
			}
		}
		rr.Close()
	}
	if len(rows) == 0 {
		return nil, inputErrorf(file, 0, "no rows")
	}
	return rows, nil
}

// basetenParquetRow converts one Parquet row (its leaf values) to a
// record and validates it as a JSON line is.
func basetenParquetRow(file string, n int, row parquet.Row, col map[int]string) (BasetenRow, error) {
	var j basetenJSON
	bad := func(name string, v parquet.Value) error {
		return inputErrorf(file, 0, "row %d: column %q: want an integer, got a %s", n, name, v.Kind())
	}
	for _, v := range row {
		name, ok := col[v.Column()]
		if !ok || v.IsNull() {
			continue
		}
		var num *int64
		switch v.Kind() {
		case parquet.Int32:
			x := int64(v.Int32())
			num = &x
		case parquet.Int64:
			x := v.Int64()
			num = &x
		}
		str := ""
		if v.Kind() == parquet.ByteArray {
			str = string(v.ByteArray())
		}
		switch name {
		case "prompt":
			if v.Kind() != parquet.ByteArray {
				return BasetenRow{}, inputErrorf(file, 0, "row %d: column %q: want a string, got a %s", n, name, v.Kind())
			}
			j.Prompt = &str
		case "total_hashes":
			if num == nil {
				return BasetenRow{}, bad(name, v)
			}
			j.TotalHashes = append(j.TotalHashes, *num)
		case "provided_session_id":
			if num != nil {
				str = strconv.FormatInt(*num, 10)
			} else if v.Kind() != parquet.ByteArray {
				return BasetenRow{}, bad(name, v)
			}
			j.ProvidedSessionID = []byte(strconv.Quote(str))
		default:
			if num == nil {
				return BasetenRow{}, bad(name, v)
			}
			x := *num
			switch name {
			case "timestamp_start_unix_ms":
				j.StartMs = &x
			case "input_tokens", "output_tokens", "block_size":
				i := int(x)
				switch name {
				case "input_tokens":
					j.InputTokens = &i
				case "output_tokens":
					j.OutputTokens = &i
				default:
					j.BlockSize = &i
				}
			case "poor_man_session_id":
				j.PoorManSessionID = &x
			case "duration_e2e_ms":
				j.DurationE2EMs = &x
			}
		}
	}
	r, err := j.row(file, n)
	var ie *InputError
	if errors.As(err, &ie) && ie.Line == n {
		ie.Line, ie.Msg = 0, fmt.Sprintf("row %d: %s", n, ie.Msg)
	}
	return r, err
}
