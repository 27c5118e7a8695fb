package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// PNG size: 8 × 4.5 inches at 144 dpi (1152 × 648 pixels), sharp enough
// for a paper and small enough for a pull request.
const (
	pngWidth  = 8 * vg.Inch
	pngHeight = 4.5 * vg.Inch
	pngDPI    = 144
)

// Palette is the colour of each run, in order (the HTML page's too).
var Palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xd6, 0x27, 0x28, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xff, 0x7f, 0x0e, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// lineDashes tell apart the lines of one run in one chart (two GPUs):
// solid, dashed, dotted, dash-dotted.
var lineDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(1.5), vg.Points(3)}, {vg.Points(6), vg.Points(3), vg.Points(1.5), vg.Points(3)}}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WritePNGs writes one PNG per chart of d into the folder dir (created if
// needed), named after the chart ("cdf-time_to_first_token.png"), and
// returns their paths.
func WritePNGs(dir string, d Data) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range d.Charts {
		canvas, err := render(c, true)
		if err != nil {
			return paths, fmt.Errorf("chart %s: %w", c.ID, err)
		}
		path := filepath.Join(dir, unsafeName.ReplaceAllString(c.ID, "_")+".png")
		f, err := os.Create(path)
		if err != nil {
			return paths, err
		}
		if _, err := (vgimg.PngCanvas{Canvas: canvas}).WriteTo(f); err != nil {
			f.Close()
			return paths, fmt.Errorf("%s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// render draws c on a white canvas of the PNG's size.
func render(c Chart, legend bool) (*vgimg.Canvas, error) {
	p, err := plotChart(c, legend)
	if err != nil {
		return nil, err
	}
	canvas := vgimg.NewWith(vgimg.UseWH(pngWidth, pngHeight), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(canvas))
	return canvas, nil
}

// plotChart draws one chart with gonum/plot as the HTML page draws it:
// lines, steps (histograms: each x a bin's left edge) and points, a colour
// per run, the sweep's knee hollow and its operating point filled. The
// legend is left out when legend is false (the tests look at the data
// alone).
func plotChart(c Chart, legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Add(plotter.NewGrid())
	// CDFs rise to the top right: their legend goes below.
	p.Legend.Top = !strings.HasPrefix(c.ID, "cdf-")
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	entries := 0
	perRun := map[int]int{} // lines drawn so far per run: later ones dashed
	for _, s := range c.Series {
		col := Palette[s.Run%len(Palette)]
		dashes := lineDashes[0]
		if s.Style != Points {
			dashes = lineDashes[perRun[s.Run]%len(lineDashes)]
			perRun[s.Run]++
		}
		segs := segments(s, c.LogX)
		if len(segs) == 0 {
			continue
		}
		var thumb plot.Thumbnailer
		for _, pts := range segs {
			switch s.Style {
			case Points:
				sc, err := plotter.NewScatter(pts)
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
				switch s.Marker {
				case "knee":
					sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(6), Shape: draw.RingGlyph{}}
				case "":
				default:
					sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CircleGlyph{}}
				}
				p.Add(sc)
				thumb = sc
			default:
				l, err := plotter.NewLine(pts)
				if err != nil {
					return nil, err
				}
				l.Color, l.Width, l.Dashes = col, vg.Points(1.5), dashes
				if s.Style == Step {
					l.StepStyle = plotter.PostStep
				}
				p.Add(l)
				thumb = l
				if s.Style == Line && len(pts) < 40 {
					sc, err := plotter.NewScatter(pts)
					if err != nil {
						return nil, err
					}
					sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
					p.Add(sc)
				}
			}
		}
		if legend {
			p.Legend.Add(s.Label, thumb)
			entries++
		}
	}
	if p.Legend.Top && entries > 0 {
		// Headroom, so the legend in the top corner covers less data.
		p.Y.Max += (p.Y.Max - p.Y.Min) * (0.02 + 0.045*float64(entries))
	}
	return p, nil
}

// segments splits a series at its gaps (null values, and values a log
// axis cannot show) into runs of drawable points.
func segments(s Series, logX bool) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.X {
		x, y := float64(s.X[i]), float64(s.Y[i])
		if !finite(x) || !finite(y) || logX && x <= 0 {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: x, Y: y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
