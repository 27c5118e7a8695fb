package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
// per run, the sweep's knee hollow and its operating point filled, each
// sweep point named by its value; linear axes from zero (a small change
// does not look like a cliff), ticks every round step. The legend is left
// out when legend is false (the tests look at the data alone).
func plotChart(c Chart, legend bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.X.Tick.Marker = roundTicks{whole: c.XWhole}
	p.Y.Tick.Marker = roundTicks{}
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(8), -vg.Points(4)
	p.Add(plotter.NewGrid())
	// CDFs rise to the top right: their legend goes below.
	p.Legend.Top = !strings.HasPrefix(c.ID, "cdf-")
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	entries, named, marked := 0, false, false
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
		marked = marked || s.Style == Points
		var thumb plot.Thumbnailer
		for _, pts := range segs {
			switch s.Style {
			case Bars:
				// The stacked bars' series come tallest first: each drawn
				// over the one before, it leaves the top of that visible.
				bars, err := plotter.NewBarChart(barValues(pts), vg.Points(22))
				if err != nil {
					return nil, err
				}
				bars.Color, bars.LineStyle.Width = col, 0
				bars.XMin = pts[0].X // the first stage's middle
				p.Add(bars)
				thumb = bars
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
		if labels, err := pointLabels(s, c.LogX); err != nil {
			return nil, err
		} else if labels != nil {
			p.Add(labels)
			named = true
		}
	}
	// Linear axes start at zero when the data are not negative.
	if !c.LogX && p.X.Min > 0 {
		p.X.Min = 0
	}
	if n := len(c.XStages); n > 0 {
		// A stage axis: stage i spans [i, i+1), named at its middle.
		p.X.Min, p.X.Max = 0, float64(n)
		ticks := make([]plot.Tick, n)
		for i, name := range c.XStages {
			ticks[i] = plot.Tick{Value: float64(i) + 0.5, Label: name}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if p.Y.Min > 0 {
		p.Y.Min = 0
	}
	if (named || marked) && !c.LogX {
		// Room for the last point's name, and around points.
		p.X.Max += (p.X.Max - p.X.Min) * 0.06
	}
	if marked && !(p.Legend.Top && entries > 0) {
		p.Y.Max += (p.Y.Max - p.Y.Min) * 0.08
	}
	if p.Legend.Top && entries > 0 {
		// Headroom, so the legend in the top corner covers less data.
		p.Y.Max += (p.Y.Max - p.Y.Min) * (0.08 + 0.05*float64(entries))
	}
	return p, nil
}

// pointLabels names each point of a series that carries names (a sweep's
// values), beside the point; nil for a series without them.
func pointLabels(s Series, logX bool) (*plotter.Labels, error) {
	if len(s.Labels) == 0 {
		return nil, nil
	}
	var xys plotter.XYLabels
	for i := range s.X {
		x, y := float64(s.X[i]), float64(s.Y[i])
		if i >= len(s.Labels) || s.Labels[i] == "" || !finite(x) || !finite(y) || logX && x <= 0 {
			continue
		}
		xys.XYs = append(xys.XYs, plotter.XY{X: x, Y: y})
		xys.Labels = append(xys.Labels, s.Labels[i])
	}
	if len(xys.XYs) == 0 {
		return nil, nil
	}
	l, err := plotter.NewLabels(xys)
	if err != nil {
		return nil, err
	}
	l.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(4)}
	return l, nil
}

// roundTicks marks an axis every round step (1, 2, 2.5 or 5 times a power
// of ten) about ten times across its span, labelled with no more
// decimals than the step has; whole keeps the steps whole numbers (runs).
type roundTicks struct{ whole bool }

// Ticks returns the axis's major ticks, labelled, and a minor one between.
func (r roundTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := roundStep((hi - lo) / 10)
	if r.whole {
		step = max(1, math.Round(step))
	}
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	if s := step / math.Pow(10, math.Floor(math.Log10(step))); s == 2.5 {
		decimals++
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		if mid := v + step/2; mid <= hi && !r.whole {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	return ticks
}

// barValues are the heights of a bar series' points.
func barValues(pts plotter.XYs) plotter.Values {
	v := make(plotter.Values, len(pts))
	for i, p := range pts {
		v[i] = p.Y
	}
	return v
}

// roundStep is the smallest round step (1, 2, 2.5, 5 × 10^k) at least raw.
func roundStep(raw float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
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
