package report

import (
	"fmt"
	"os"
)

// Formats WriteData knows.
const (
	FormatHTML = "html"
	FormatPNG  = "png"
)

// WriteData writes the report d to out: one HTML file for FormatHTML, or a
// folder of PNG files (one per chart) for FormatPNG. It returns the paths
// written.
func WriteData(out, format string, d Data) ([]string, error) {
	switch format {
	case FormatHTML, "":
		f, err := os.Create(out)
		if err != nil {
			return nil, err
		}
		if err := WriteHTML(f, d); err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", out, err)
		}
		return []string{out}, f.Close()
	case FormatPNG:
		return WritePNGs(out, d)
	}
	return nil, fmt.Errorf("--format: want html or png, got %q", format)
}
