package inferenceperf

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/bounded"
)

// tool names the command in messages.
const tool = "inference-perf"

// maxConfig bounds the config file.
const maxConfig = 4 << 20

// readConfig reads the config file (YAML; JSON is YAML) through the one
// bounded reader.
func readConfig(ctx context.Context, path string) (map[string]any, error) {
	b, err := bounded.ReadFile(ctx, path, maxConfig)
	if err != nil {
		return nil, cmdline.Usagef("%s: --config_file: %v", tool, err)
	}
	return parseYAML(path, b)
}

// parseYAML reads a YAML document into plain maps, lists and scalars.
func parseYAML(path string, b []byte) (map[string]any, error) {
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, cmdline.Usagef("%s: %s: %v", tool, path, err)
	}
	if doc == nil {
		return map[string]any{}, nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, cmdline.Usagef("%s: %s: want a mapping of sections (load, api, server, data, …)", tool, path)
	}
	return m, nil
}

// setPath sets a dotted key (load.stages) in cfg, making the mappings on
// the way: inference-perf's --section.key VALUE overrides.
func setPath(cfg map[string]any, key string, v any) error {
	parts := strings.Split(key, ".")
	cur := cfg
	for _, p := range parts[:len(parts)-1] {
		next, ok := cur[p]
		if !ok || next == nil {
			m := map[string]any{}
			cur[p] = m
			cur = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return cmdline.Usagef("%s: --%s: %s is not a section", tool, key, p)
		}
		cur = m
	}
	cur[parts[len(parts)-1]] = v
	return nil
}

// cliValue reads a --section.key value: JSON or YAML (a list, a mapping,
// a number, true/false), else the text.
func cliValue(s string) any {
	var v any
	if yaml.Unmarshal([]byte(s), &v) == nil && v != nil {
		return v
	}
	return s
}

// section is one mapping of the config, read strictly: every key it has
// must be read (inference-perf's models forbid extra keys), each refused
// key with its reason.
type section struct {
	path string
	m    map[string]any
	used map[string]bool
}

func sectionOf(path string, v any) (*section, error) {
	if v == nil {
		return &section{path: path, m: map[string]any{}, used: map[string]bool{}}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, cmdline.Usagef("%s: %s: want a mapping, got %v", tool, path, v)
	}
	return &section{path: path, m: m, used: map[string]bool{}}, nil
}

func (s *section) has(k string) bool { _, ok := s.m[k]; return ok && s.m[k] != nil }

func (s *section) get(k string) any {
	s.used[k] = true
	return s.m[k]
}

func (s *section) sub(k string) (*section, error) { return sectionOf(s.path+"."+k, s.get(k)) }

func (s *section) str(k, def string) (string, error) {
	v := s.get(k)
	switch x := v.(type) {
	case nil:
		return def, nil
	case string:
		return x, nil
	case int, float64, bool:
		return fmt.Sprint(x), nil
	}
	return "", cmdline.Usagef("%s: %s.%s: want text, got %v", tool, s.path, k, v)
}

func (s *section) num(k string, def float64) (float64, error) {
	v := s.get(k)
	switch x := v.(type) {
	case nil:
		return def, nil
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, nil
		}
	}
	return 0, cmdline.Usagef("%s: %s.%s: want a number, got %v", tool, s.path, k, v)
}

func (s *section) integer(k string, def int) (int, error) {
	f, err := s.num(k, float64(def))
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, cmdline.Usagef("%s: %s.%s: want an integer, got %g", tool, s.path, k, f)
	}
	return int(f), nil
}

func (s *section) boolean(k string, def bool) (bool, error) {
	v := s.get(k)
	switch x := v.(type) {
	case nil:
		return def, nil
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, nil
		}
	}
	return false, cmdline.Usagef("%s: %s.%s: want true or false, got %v", tool, s.path, k, v)
}

// refuse fails when key is set (and not at its default def) with why.
func (s *section) refuse(k, why string) error {
	v := s.get(k)
	if v == nil {
		return nil
	}
	switch x := v.(type) {
	case bool:
		if !x {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	}
	return cmdline.Usagef("%s: %s.%s is refused: %s", tool, s.path, k, why)
}

// done fails on a key nothing read: an unknown key, as inference-perf's
// strict models fail on it.
func (s *section) done() error {
	for _, k := range slices.Sorted(maps.Keys(s.m)) {
		if !s.used[k] {
			return cmdline.Usagef("%s: %s: unknown key %q (inference-perf's config forbids keys it does not define)", tool, s.path, k)
		}
	}
	return nil
}

// distribution is inference-perf's Distribution: lengths drawn from a
// shape, clamped to [min, max].
type distribution struct {
	min, max        int
	mean, stdDev    float64
	totalCount      int // 0: not given
	kind            string
	hasDistribution bool
}

// distributionOf reads a Distribution mapping (its defaults are
// inference-perf's: min 10, max 1024, mean 512, std_dev 200, normal).
func distributionOf(s *section) (distribution, error) {
	d := distribution{kind: "normal", hasDistribution: true}
	var err error
	if d.min, err = s.integer("min", 10); err != nil {
		return d, err
	}
	if d.max, err = s.integer("max", 1024); err != nil {
		return d, err
	}
	if d.mean, err = s.num("mean", 512); err != nil {
		return d, err
	}
	if d.stdDev, err = s.num("std_dev", 200); err != nil {
		return d, err
	}
	if s.has("variance") {
		v, err := s.num("variance", 0)
		if err != nil {
			return d, err
		}
		if s.used["std_dev"] && s.m["std_dev"] != nil {
			return d, cmdline.Usagef("%s: %s: std_dev and variance are exclusive", tool, s.path)
		}
		d.stdDev = math.Sqrt(v)
	}
	if d.totalCount, err = s.integer("total_count", 0); err != nil {
		return d, err
	}
	if d.kind, err = s.str("type", "normal"); err != nil {
		return d, err
	}
	switch d.kind {
	case "normal", "uniform", "fixed":
	case "skew_normal", "lognormal", "poisson":
		return d, cmdline.Usagef("%s: %s.type %s is refused: surge draws lengths from normal, uniform or fixed distributions here", tool, s.path, d.kind)
	default:
		return d, cmdline.Usagef("%s: %s.type %q: want normal, skew_normal, lognormal, uniform, poisson or fixed", tool, s.path, d.kind)
	}
	if err := s.refuse("skew", "only skew_normal uses it, which surge refuses"); err != nil {
		return d, err
	}
	if d.min > d.max {
		return d, cmdline.Usagef("%s: %s: Minimum value cannot be greater than maximum value.", tool, s.path)
	}
	if d.stdDev < 0 {
		return d, cmdline.Usagef("%s: %s: Standard deviation cannot be negative.", tool, s.path)
	}
	if d.kind == "normal" && (d.mean < float64(d.min) || d.mean > float64(d.max)) {
		return d, cmdline.Usagef("%s: %s: Mean cannot be outside min and max range.", tool, s.path)
	}
	if d.min < 1 {
		return d, cmdline.Usagef("%s: %s: min %d: surge sends prompts and outputs of at least 1 token", tool, s.path, d.min)
	}
	return d, s.done()
}

// defaultWorkers is inference-perf's num_workers default: the CPU count.
func defaultWorkers() int { return max(1, runtime.NumCPU()) }
