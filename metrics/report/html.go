package report

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"math"
	"strconv"
)

// The chart library, embedded so a report opens with no network (see
// assets/SOURCE.md for its version and licence).
var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/LICENSE
	uplotLicense string
	//go:embed page.js
	pageJS string
	//go:embed page.html
	pageHTML string
)

var page = template.Must(template.New("report").Funcs(template.FuncMap{"num": display, "at": at}).Parse(pageHTML))

// at is xs[i], "" past its end (a row without intervals has none).
func at(xs []string, i int) string {
	if i < len(xs) {
		return xs[i]
	}
	return ""
}

// display writes a table's number for reading: whole numbers as they are,
// others to three significant digits (25.6, not 25.6133; 1,234 ms stays
// 1234), NaN as a dash.
func display(n Num) string {
	f := float64(n)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return "–"
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case math.Abs(f) >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case math.Abs(f) < 0.001:
		return strconv.FormatFloat(f, 'g', 3, 64)
	}
	decimals := 2 - int(math.Floor(math.Log10(math.Abs(f))))
	return strconv.FormatFloat(f, 'f', decimals, 64)
}

// WriteHTML writes d as one self-contained HTML page: the data as JSON, the
// chart library and the page's script inline.
func WriteHTML(w io.Writer, d Data) error {
	// json.Marshal escapes <, > and & so the data cannot close its script
	// element.
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return page.Execute(w, map[string]any{
		"D":       d,
		"JSON":    template.JS(b),
		"UPlot":   template.JS(uplotJS),
		"CSS":     template.CSS(uplotCSS),
		"License": uplotLicense,
		"Page":    template.JS(pageJS),
	})
}
