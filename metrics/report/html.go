package report

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
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

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num": func(n Num) string {
		b, _ := n.MarshalJSON()
		if string(b) == "null" {
			return "–"
		}
		return string(b)
	},
}).Parse(pageHTML))

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
