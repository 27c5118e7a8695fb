package profile

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/metrics/export"
)

// A sweep over any list flag (--isl 128,512, --request-count 5,10, two
// lists as a grid or zipped) is planned as the stages of one run, as a
// --concurrency sweep is: each point is a profile stage with its own bound
// (count, duration), load (concurrency, rate, users) and, for --isl and
// --osl, its own synthetic prompts. That keeps the one collector, the
// per-stage folders, the sweep aggregate, the stage table and the
// report's sweep charts as they are, instead of a second runner beside
// Run; the points run back to back, each drained before the next.

// maxSweepPoints bounds the stages a grid makes.
const maxSweepPoints = 256

// sweepDim is one swept parameter: the flag and AIPerf's name for it.
type sweepDim struct {
	flag, name string
	values     []float64
	integer    bool
}

// sweepDims are the parameters in the order their stages nest.
var sweepDimOrder = []struct {
	flag, name string
	integer    bool
}{
	{"concurrency", ModeConcurrency, true}, {"request-rate", ModeRequestRate, false},
	{"isl", "isl", true}, {"osl", "osl", true}, {"request-count", "request_count", true},
	{"benchmark-duration", "benchmark_duration", false}, {"num-users", "num_users", true},
	{"user-centric-rate", "user_centric_rate", false},
}

// sweep is a run's swept parameters and the points they make.
type sweep struct {
	dims   []sweepDim
	points [][]float64 // one value per dim
}

// sweepOf returns the sweep the list flags ask for; nil when none does
// beyond a --concurrency or --request-rate list alone (planned as before).
func (c *config) sweepOf(l load) (*sweep, error) {
	lists := map[string][]float64{}
	for k, v := range c.SweepLists {
		lists[k] = v
	}
	if len(l.concs) > 1 {
		lists["concurrency"] = intsToFloats(l.concs)
	}
	if len(l.rates) > 1 {
		lists["request-rate"] = l.rates
	}
	sw := &sweep{}
	for _, d := range sweepDimOrder {
		if vs, ok := lists[d.flag]; ok && len(vs) > 1 {
			sw.dims = append(sw.dims, sweepDim{flag: d.flag, name: d.name, values: vs, integer: d.integer})
		}
	}
	if len(c.SweepLists) == 0 {
		return nil, nil
	}
	mode := c.SweepMode
	if mode == "" {
		mode = cmdline.SweepGrid
	}
	switch {
	case mode != cmdline.SweepGrid && mode != cmdline.SweepZip:
		return nil, cmdline.Usagef("--sweep-mode %q: want grid or zip", c.SweepMode)
	case c.FixedSchedule:
		return nil, cmdline.Usagef("%s lists values: a fixed schedule replays its trace once; drop --fixed-schedule or the list", sw.flags())
	case c.Search != nil || c.ControlAddr != "":
		return nil, cmdline.Usagef("%s lists values: a live or search run sets its stages itself; give one value", sw.flags())
	}
	if sh, err := c.HostShard(); err == nil && !sh.Whole() {
		return nil, cmdline.Usagef("%s lists values: sweep over one load host, or run one value per sharded run", sw.flags())
	}
	if c.InputFile != "" || c.PublicDataset != "" {
		for _, d := range sw.dims {
			if d.name == "isl" || d.name == "osl" {
				return nil, cmdline.Usagef("--%s lists values: it shapes synthetic prompts, and --input-file/--public-dataset gives the prompts", d.flag)
			}
		}
	}
	if mode == cmdline.SweepZip {
		n := len(sw.dims[0].values)
		for _, d := range sw.dims[1:] {
			if len(d.values) != n {
				return nil, cmdline.Usagef("--sweep-mode zip: --%s lists %d values and --%s %d: zipped lists need equal lengths",
					sw.dims[0].flag, n, d.flag, len(d.values))
			}
		}
		for i := range n {
			pt := make([]float64, len(sw.dims))
			for j, d := range sw.dims {
				pt[j] = d.values[i]
			}
			sw.points = append(sw.points, pt)
		}
		return sw, nil
	}
	total := 1
	for _, d := range sw.dims {
		total *= len(d.values)
	}
	if total > maxSweepPoints {
		return nil, cmdline.Usagef("%s make %d combinations (grid): at most %d; shorten a list or use --sweep-mode zip", sw.flags(), total, maxSweepPoints)
	}
	// The first list is the outermost: its value changes slowest.
	var walk func(j int, pt []float64)
	walk = func(j int, pt []float64) {
		if j == len(sw.dims) {
			sw.points = append(sw.points, append([]float64(nil), pt...))
			return
		}
		for _, v := range sw.dims[j].values {
			walk(j+1, append(pt, v))
		}
	}
	walk(0, nil)
	return sw, nil
}

// flags names the swept flags ("--isl and --osl").
func (sw *sweep) flags() string {
	names := make([]string, len(sw.dims))
	for i, d := range sw.dims {
		names[i] = "--" + d.flag
	}
	return strings.Join(names, " and ")
}

// apply sets point i's values into a copy of the flags.
func (sw *sweep) apply(i int, c *config, l *load) {
	for j, d := range sw.dims {
		v := sw.points[i][j]
		switch d.name {
		case ModeConcurrency:
			l.concs = []int{int(v)}
		case ModeRequestRate:
			l.rates = []float64{v}
		case "isl":
			c.ISL = int(v)
		case "osl":
			c.OSL = int(v)
		case "request_count":
			c.RequestCount = int(v)
		case "benchmark_duration":
			c.Duration = time.Duration(v * float64(time.Second))
		case "num_users":
			c.NumUsers = int(v)
		case "user_centric_rate":
			c.UserCentricRate = v
		}
	}
}

// text formats a value of d as AIPerf's folder names do: integers bare,
// others as Python's str(float).
func (d sweepDim) text(v float64) string {
	if d.integer {
		return intText(v)
	}
	return pyFloat(v)
}

// folder is point i's run folder: "isl_128" for one parameter (AIPerf's
// <parameter>_<value>), "variation_0001_isl_128_osl_64" for several.
func (sw *sweep) folder(i int) string {
	parts := make([]string, len(sw.dims))
	for j, d := range sw.dims {
		parts[j] = d.name + "_" + d.text(sw.points[i][j])
	}
	if len(sw.dims) == 1 {
		return parts[0]
	}
	return fmt.Sprintf("variation_%04d_%s", i, strings.Join(parts, "_"))
}

// label names point i on the console and in the report: "isl=128, osl=64"
// (AIPerf's variation label).
func (sw *sweep) label(i int) string {
	parts := make([]string, len(sw.dims))
	for j, d := range sw.dims {
		parts[j] = d.name + "=" + d.text(sw.points[i][j])
	}
	return strings.Join(parts, ", ")
}

// short is point i's values alone, for the dashboard's narrow column.
func (sw *sweep) short(i int) string {
	parts := make([]string, len(sw.dims))
	for j := range sw.dims {
		parts[j] = strconv.FormatFloat(sw.points[i][j], 'f', -1, 64)
	}
	return strings.Join(parts, "×")
}

// mode is the stages' mode: the parameter's name, or "variation" for
// several.
func (sw *sweep) mode() string {
	if len(sw.dims) == 1 {
		return sw.dims[0].name
	}
	return "variation"
}

// stimulus is the artifact folder's load part: "isl_sweep_128_512",
// joined with "-" for several.
func (sw *sweep) stimulus() string {
	parts := make([]string, len(sw.dims))
	for j, d := range sw.dims {
		vs := make([]string, len(d.values))
		for k, v := range d.values {
			vs[k] = d.text(v)
		}
		parts[j] = d.name + "_sweep_" + strings.Join(vs, "_")
	}
	return strings.Join(parts, "-")
}

// value is point i as AIPerf's sweep files carry it.
func (sw *sweep) value(i int) export.SweepValue {
	v := export.SweepValue{Label: sw.folder(i)}
	if len(sw.dims) == 1 {
		v.Value, v.Integer = sw.points[i][0], sw.dims[0].integer
		return v
	}
	v.Value, v.Integer = float64(i), true
	for j, d := range sw.dims {
		v.Point = append(v.Point, export.Param{Name: d.name, Value: sw.points[i][j], Integer: d.integer})
	}
	return v
}

// variation is point i's run_info.variation_values.
func (sw *sweep) variation(i int) map[string]any {
	out := map[string]any{}
	for j, d := range sw.dims {
		out[d.name] = valueOf(export.SweepValue{Value: sw.points[i][j], Integer: d.integer})
	}
	return out
}

// planSweep plans every point of sw as the profile stage of a config with
// the point's values (seeded --random-seed + the point's index, as AIPerf
// seeds a sweep's values), the warmup only before the first; each point
// takes prompts of its own when they are synthetic, else all share the
// dataset.
func (c *config) planSweep(ctx context.Context, tok datasets.Tokenizer, l load, sw *sweep, log io.Writer) (*plan, *datasets.Dataset, error) {
	synthetic := c.InputFile == "" && c.PublicDataset == "" && !c.rankings()
	var all, shared *datasets.Dataset
	out := &plan{sweep: sw, mode: sw.mode()}
	for i := range sw.points {
		vc, vl := *c, l
		vc.SweepLists = nil
		vc.Seed = c.ValueSeed(i)
		if i > 0 {
			vc.WarmupCount = 0
		}
		sw.apply(i, &vc, &vl)
		if err := vc.validate(); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", sw.label(i), err)
		}
		ds := shared
		if synthetic || ds == nil {
			d, err := vc.loadDataset(ctx, tok, vc.conversationsNeeded(vl), log)
			if err != nil {
				return nil, nil, err
			}
			ds = d
			if !synthetic {
				shared = d
			}
		}
		p, err := vc.plan(ds, vl)
		if err != nil {
			return nil, nil, err
		}
		base := 0
		switch {
		case all == nil:
			all = ds
		case synthetic:
			base = len(all.Conversations)
			for _, conv := range ds.Conversations {
				conv.ID = fmt.Sprintf("%s-v%d", conv.ID, i)
				all.Conversations = append(all.Conversations, conv)
			}
		}
		size := len(ds.Conversations)
		for _, st := range p.stages {
			inner := st.Conversation
			if inner == nil {
				inner = st.Pick
			}
			if inner == nil {
				inner = func(k int) int { return k }
			}
			st.Conversation = func(k int) int { return base + inner(k)%size }
			out.stages = append(out.stages, st)
		}
		if i == 0 {
			out.loadMode, out.target, out.rateCap, out.users = p.mode, p.target, p.rateCap, p.users
			out.loadStimulus = p.stimulus()
		}
		if p.total == 0 || (i > 0 && out.total == 0) {
			out.total = 0 // a point bounded by time: no planned count
		} else {
			out.total += p.total
		}
		out.values = append(out.values, sw.value(i).Value)
	}
	return out, all, nil
}

func intsToFloats(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// labels are every point's label.
func (sw *sweep) labels() []string {
	out := make([]string, len(sw.points))
	for i := range out {
		out[i] = sw.label(i)
	}
	return out
}

// inputConfig is point i's input_config: the run's, with each swept
// flag's value and seed, the seed the point was planned with.
func (sw *sweep) inputConfig(i int, ic any, seed uint64) any {
	m, ok := ic.(map[string]any)
	if !ok {
		return ic
	}
	for j, d := range sw.dims {
		if path := cmdline.PathOf(d.flag); path != "" {
			m = cmdline.WithPath(m, path, valueOf(export.SweepValue{Value: sw.points[i][j], Integer: d.integer}))
		}
	}
	return cmdline.WithPath(m, cmdline.PathOf("random-seed"), seed)
}
