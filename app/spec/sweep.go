package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/metrics/export"
)

// A sweep over any list flag (--isl 128,512, --request-count 5,10, two
// lists as a grid or zipped) is planned as the stages of one run, as a
// --concurrency sweep is: each point is a profile stage with its own bound
// (count, duration), load (concurrency, rate, users) and, for --isl and
// --osl, its own synthetic prompts. Each point is a Spec of its own,
// parsed (and so checked) like the run's (Spec.Point).

// maxSweepPoints bounds the stages a grid makes.
const maxSweepPoints = 256

// Load modes, as exports and the dashboard name them (a sweep's
// parameters take these names too).
const (
	ModeConcurrency   = "concurrency"
	ModeRequestRate   = "request_rate"
	ModeFixedSchedule = "fixed_schedule"
	ModeUserCentric   = "user_centric"
)

// SweepDim is one swept parameter: its flag, AIPerf's name for it, and
// its values.
type SweepDim struct {
	Flag, Name string
	Values     []float64
	Integer    bool
}

// sweepDimOrder are the parameters in the order their stages nest.
var sweepDimOrder = []struct {
	flag, name string
	integer    bool
}{
	{"concurrency", ModeConcurrency, true}, {"request-rate", ModeRequestRate, false},
	{"isl", "isl", true}, {"osl", "osl", true}, {"request-count", "request_count", true},
	{"benchmark-duration", "benchmark_duration", false}, {"num-users", "num_users", true},
	{"user-centric-rate", "user_centric_rate", false},
}

// Sweep is a run's swept parameters and the points they make.
type Sweep struct {
	Dims []SweepDim
	// Points hold one value per dim each (Spec.Point is the run of one).
	Points [][]float64
}

// parseSweep reads the sweep the list flags ask for: none beyond a
// --concurrency or --request-rate list alone (planned as stages), else
// every point, each checked as a run of its own.
func parseSweep(s *Spec, c *cmdline.Config) error {
	lists := map[string][]float64{}
	for k, v := range c.SweepLists {
		lists[k] = v
	}
	if len(s.Load.Concs) > 1 {
		lists["concurrency"] = intsToFloats(s.Load.Concs)
	}
	if len(s.Load.Rates) > 1 {
		lists["request-rate"] = s.Load.Rates
	}
	sw := &Sweep{}
	for _, d := range sweepDimOrder {
		if vs, ok := lists[d.flag]; ok && len(vs) > 1 {
			sw.Dims = append(sw.Dims, SweepDim{Flag: d.flag, Name: d.name, Values: vs, Integer: d.integer})
		}
	}
	if len(c.SweepLists) == 0 {
		return nil
	}
	mode := c.SweepMode
	if mode == "" {
		mode = cmdline.SweepGrid
	}
	switch {
	case mode != cmdline.SweepGrid && mode != cmdline.SweepZip:
		return cmdline.Usagef("--sweep-mode %q: want grid or zip", c.SweepMode)
	case c.FixedSchedule:
		return cmdline.Usagef("%s lists values: a fixed schedule replays its trace once; drop --fixed-schedule or the list", sw.Flags())
	case c.Search != nil || c.ControlAddr != "":
		return cmdline.Usagef("%s lists values: a live or search run sets its stages itself; give one value", sw.Flags())
	case !s.Shard.Whole():
		return cmdline.Usagef("%s lists values: sweep over one load host, or run one value per sharded run", sw.Flags())
	}
	if datasetGiven(c) {
		for _, d := range sw.Dims {
			if d.Name == "isl" || d.Name == "osl" {
				return cmdline.Usagef("--%s lists values: it shapes synthetic prompts, and the dataset (--input-file, --public-dataset, --hf-dataset) gives the prompts", d.Flag)
			}
		}
	}
	if mode == cmdline.SweepZip {
		n := len(sw.Dims[0].Values)
		for _, d := range sw.Dims[1:] {
			if len(d.Values) != n {
				return cmdline.Usagef("--sweep-mode zip: --%s lists %d values and --%s %d: zipped lists need equal lengths",
					sw.Dims[0].Flag, n, d.Flag, len(d.Values))
			}
		}
		for i := range n {
			pt := make([]float64, len(sw.Dims))
			for j, d := range sw.Dims {
				pt[j] = d.Values[i]
			}
			sw.Points = append(sw.Points, pt)
		}
	} else {
		total := 1
		for _, d := range sw.Dims {
			total *= len(d.Values)
		}
		if total > maxSweepPoints {
			return cmdline.Usagef("%s make %d combinations (grid): at most %d; shorten a list or use --sweep-mode zip", sw.Flags(), total, maxSweepPoints)
		}
		// The first list is the outermost: its value changes slowest.
		var walk func(j int, pt []float64)
		walk = func(j int, pt []float64) {
			if j == len(sw.Dims) {
				sw.Points = append(sw.Points, append([]float64(nil), pt...))
				return
			}
			for _, v := range sw.Dims[j].Values {
				walk(j+1, append(pt, v))
			}
		}
		walk(0, nil)
	}
	for i := range sw.Points {
		if _, err := Parse(sw.point(i, *c)); err != nil {
			return fmt.Errorf("%s: %w", sw.Label(i), err)
		}
	}
	s.Load.Sweep = sw
	return nil
}

// Point is the run of point i of s's sweep: one value of every list,
// seeded as AIPerf seeds the point, checked as a run of its own when s was
// parsed.
func (s *Spec) Point(i int) (*Spec, error) {
	ps, err := Parse(s.Load.Sweep.point(i, s.given))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Load.Sweep.Label(i), err)
	}
	return ps, nil
}

// point is the configuration of point i: the point's value of every list,
// seeded --random-seed + i (or alike, --parameter-sweep-same-seed), the
// warmup before the first point only. --start-at is the run's, checked
// once: a point planned later must not find it passed.
func (sw *Sweep) point(i int, c cmdline.Config) cmdline.Config {
	c.SweepLists, c.StartAt = nil, ""
	c.Seed = c.ValueSeed(i)
	if i > 0 {
		c.WarmupCount = 0
	}
	for j, d := range sw.Dims {
		v := sw.Points[i][j]
		switch d.Name {
		case ModeConcurrency:
			c.Concurrency = strconv.FormatFloat(v, 'f', -1, 64)
		case ModeRequestRate:
			c.RequestRate = strconv.FormatFloat(v, 'g', -1, 64)
		case "isl":
			c.ISL = int(v)
		case "osl":
			c.OSL = int(v)
		case "request_count":
			c.RequestCount, c.ZeroCount = int(v), v == 0
		case "benchmark_duration":
			c.Duration, c.ZeroDuration = time.Duration(v*float64(time.Second)), v == 0
		case "num_users":
			c.NumUsers = int(v)
		case "user_centric_rate":
			c.UserCentricRate = v
		}
	}
	return c
}

// Flags names the swept flags ("--isl and --osl").
func (sw *Sweep) Flags() string {
	names := make([]string, len(sw.Dims))
	for i, d := range sw.Dims {
		names[i] = "--" + d.Flag
	}
	return strings.Join(names, " and ")
}

// Text formats a value of d as AIPerf's folder names do: integers bare,
// others as Python's str(float).
func (d SweepDim) Text(v float64) string {
	if d.Integer {
		return IntText(v)
	}
	return PyFloat(v)
}

// Folder is point i's run folder: "isl_128" for one parameter (AIPerf's
// <parameter>_<value>), "variation_0001_isl_128_osl_64" for several.
func (sw *Sweep) Folder(i int) string {
	parts := make([]string, len(sw.Dims))
	for j, d := range sw.Dims {
		parts[j] = d.Name + "_" + d.Text(sw.Points[i][j])
	}
	if len(sw.Dims) == 1 {
		return parts[0]
	}
	return fmt.Sprintf("variation_%04d_%s", i, strings.Join(parts, "_"))
}

// Label names point i on the console and in the report: "isl=128, osl=64"
// (AIPerf's variation label).
func (sw *Sweep) Label(i int) string {
	parts := make([]string, len(sw.Dims))
	for j, d := range sw.Dims {
		parts[j] = d.Name + "=" + d.Text(sw.Points[i][j])
	}
	return strings.Join(parts, ", ")
}

// Labels are every point's label.
func (sw *Sweep) Labels() []string {
	out := make([]string, len(sw.Points))
	for i := range out {
		out[i] = sw.Label(i)
	}
	return out
}

// Short is point i's values alone, for the dashboard's narrow column.
func (sw *Sweep) Short(i int) string {
	parts := make([]string, len(sw.Dims))
	for j := range sw.Dims {
		parts[j] = strconv.FormatFloat(sw.Points[i][j], 'f', -1, 64)
	}
	return strings.Join(parts, "×")
}

// Mode is the stages' mode: the parameter's name, or "variation" for
// several.
func (sw *Sweep) Mode() string {
	if len(sw.Dims) == 1 {
		return sw.Dims[0].Name
	}
	return "variation"
}

// Stimulus is the artifact folder's load part: "isl_sweep_128_512",
// joined with "-" for several.
func (sw *Sweep) Stimulus() string {
	parts := make([]string, len(sw.Dims))
	for j, d := range sw.Dims {
		vs := make([]string, len(d.Values))
		for k, v := range d.Values {
			vs[k] = d.Text(v)
		}
		parts[j] = d.Name + "_sweep_" + strings.Join(vs, "_")
	}
	return strings.Join(parts, "-")
}

// SweepsLoad reports whether a swept parameter is the load itself
// (concurrency, rate, users): it then names the artifact folder alone.
func (sw *Sweep) SweepsLoad() bool {
	for _, d := range sw.Dims {
		if d.Name == ModeConcurrency || d.Name == ModeRequestRate || d.Name == "num_users" || d.Name == "user_centric_rate" {
			return true
		}
	}
	return false
}

// Value is point i as AIPerf's sweep files carry it.
func (sw *Sweep) Value(i int) export.SweepValue {
	v := export.SweepValue{Label: sw.Folder(i)}
	if len(sw.Dims) == 1 {
		v.Value, v.Integer = sw.Points[i][0], sw.Dims[0].Integer
		return v
	}
	v.Value, v.Integer = float64(i), true
	for j, d := range sw.Dims {
		v.Point = append(v.Point, export.Param{Name: d.Name, Value: sw.Points[i][j], Integer: d.Integer})
	}
	return v
}

// Variation is point i's run_info.variation_values.
func (sw *Sweep) Variation(i int) map[string]any {
	out := map[string]any{}
	for j, d := range sw.Dims {
		out[d.Name] = ValueOf(export.SweepValue{Value: sw.Points[i][j], Integer: d.Integer})
	}
	return out
}

// InputConfig is point i's input_config: the run's ic, with each swept
// flag's value and the seed the point was planned with.
func (sw *Sweep) InputConfig(i int, ic any, seed uint64) any {
	m, ok := ic.(map[string]any)
	if !ok {
		return ic
	}
	for j, d := range sw.Dims {
		if path := cmdline.PathOf(d.Flag); path != "" {
			m = cmdline.WithPath(m, path, ValueOf(export.SweepValue{Value: sw.Points[i][j], Integer: d.Integer}))
		}
	}
	return cmdline.WithPath(m, cmdline.PathOf("random-seed"), seed)
}

// ValueOf is a sweep value as JSON carries it: an integer or a number.
func ValueOf(v export.SweepValue) any {
	if v.Integer {
		return int64(v.Value)
	}
	return v.Value
}

// IntText formats an integer value bare.
func IntText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// PyFloat formats v as Python's str(float) does for the values a rate
// takes: always with a decimal point ("10.0", "2.5").
func PyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") && !math.IsInf(v, 0) {
		s += ".0"
	}
	return s
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
