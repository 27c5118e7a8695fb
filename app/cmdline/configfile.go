package cmdline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/surgebench/surge/internal/bounded"
)

// ConfigFlag names the YAML file of settings (-f, --config, as AIPerf's).
const ConfigFlag = "config"

// MaxConfigBytes bounds a config file: a page of settings is a few KiB.
const MaxConfigBytes = 1 << 20

// A config file is read here rather than by urfave/cli's altsrc, which
// cannot do the job with these flags: it applies a value only to its own
// wrapper types, and a generic flag (durations, lists, AIPerf's options:
// most of profile's flags) only when the decoded YAML value is itself a
// cli.Generic, which no YAML scalar is; it decodes into plain maps, so no
// error can name a line; it skips keys that name no flag, silently; it
// reads the whole file (or an http URL) with no bound; and it finds nested
// keys by dotted flag names only, not by input_config's paths.

// setting is one flag a config file sets: the values to Set, in order,
// and where the file gave them.
type setting struct {
	flag   string   // the flag's first name
	key    string   // the key as written, dotted when nested
	values []string // one Set each
	line   int
}

// configKeys is what a config file may name: every flag of the command by
// each of its long names, and the input_config paths of flags.go's rows
// (AIPerf's config layout where AIPerf has the setting).
type configKeys struct {
	flags    map[string]cli.Flag // by every long name
	paths    map[string]string   // input_config path → the flag's first name
	sections map[string]bool     // every path's proper prefixes: "loadgen", "input.prompt"
}

// newConfigKeys indexes flags, the command's whole list.
func newConfigKeys(flags []cli.Flag) *configKeys {
	k := &configKeys{flags: map[string]cli.Flag{}, paths: map[string]string{}, sections: map[string]bool{}}
	for _, f := range flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				k.flags[n] = f
			}
		}
	}
	addPath := func(path, name string) {
		f, ok := k.flags[name]
		if !ok {
			return
		}
		if _, taken := k.paths[path]; taken {
			return // two AIPerf switches share a path (auto-plot): their names say which
		}
		k.paths[path] = f.Names()[0]
		for i := range path {
			if path[i] == '.' {
				k.sections[path[:i]] = true
			}
		}
	}
	for _, o := range options {
		addPath(o.path, o.names()[0])
	}
	for i := range foreignOptions {
		addPath(foreignOptions[i].path, foreignOptions[i].names()[0])
	}
	return k
}

// flag finds a flag by a key: a long name, or one written with
// underscores for dashes (request_count).
func (k *configKeys) flag(key string) (cli.Flag, bool) {
	if f, ok := k.flags[key]; ok {
		return f, true
	}
	f, ok := k.flags[strings.ReplaceAll(key, "_", "-")]
	return f, ok
}

// parseConfig reads a config file's settings: a YAML mapping whose keys
// are flags' long names, or input_config's sections nested as it nests
// them (loadgen: {concurrency: 4}). Errors name file:line and the key.
func parseConfig(file string, data []byte, keys *configKeys) ([]setting, error) {
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d KiB: a config file holds flag settings", file, MaxConfigBytes>>10)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil // empty: nothing set
		}
		return nil, yamlError(file, err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(file, err)
		}
		return nil, fmt.Errorf("%s:%d: a second YAML document: a config file holds one mapping", file, next.Line)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want a mapping of flag names to values (isl: 128)", file, root.Line)
	}
	if isAIPerfLayout(root) {
		return parseAIPerfConfig(file, root, keys)
	}
	r := &configReader{file: file, keys: keys, seen: map[string]int{}}
	if err := r.walk(root, ""); err != nil {
		return nil, err
	}
	return r.out, nil
}

// yamlLine is the position yaml.v3 puts in its messages.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// yamlError is a YAML syntax error as file:line: message.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		msg = msg[len(m[0]):]
		if m[1] != "" {
			return fmt.Errorf("%s:%s: %s", file, m[1], msg)
		}
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// configReader walks one file's mapping into settings.
type configReader struct {
	file string
	keys *configKeys
	seen map[string]int // flag → the line that set it
	out  []setting
}

func (r *configReader) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d: "+format, append([]any{r.file, n.Line}, args...)...)
}

// walk reads mapping m, whose keys sit under prefix ("" at the top).
func (r *configReader) walk(m *yaml.Node, prefix string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return r.errorf(k, "a key must be a flag's name")
		}
		name := k.Value
		full := name
		if prefix != "" {
			full = prefix + "." + name
		}
		if prefix == "" {
			// "endpoint" is a flag and a section: a mapping makes it the section.
			if f, ok := r.keys.flag(name); ok && !(v.Kind == yaml.MappingNode && r.keys.sections[name] && !isWholeList(f)) {
				if err := r.leaf(f, full, k, v); err != nil {
					return err
				}
				continue
			}
		}
		if flag, ok := r.keys.paths[full]; ok {
			if err := r.leaf(r.keys.flags[flag], full, k, v); err != nil {
				return err
			}
			continue
		}
		if r.keys.sections[full] {
			if v.Kind != yaml.MappingNode {
				return r.errorf(v, "%s: a section: want a mapping of its settings", full)
			}
			if err := r.walk(v, full); err != nil {
				return err
			}
			continue
		}
		return r.errorf(k, "unknown key %s%s", full, r.suggest(full, prefix))
	}
	return nil
}

// suggest is " (did you mean …?)" for an unknown key: the nearest flag
// name or section at the top, the nearest path inside a section.
func (r *configReader) suggest(full, prefix string) string {
	var cands []string
	if prefix == "" {
		for n := range r.keys.flags {
			cands = append(cands, n)
		}
		for s := range r.keys.sections {
			if !strings.Contains(s, ".") {
				cands = append(cands, s)
			}
		}
	} else {
		for p := range r.keys.paths {
			if strings.HasPrefix(p, prefix+".") {
				cands = append(cands, p)
			}
		}
	}
	slices.Sort(cands) // the same suggestion for a tie, every time
	return didYouMean(full, cands, "")
}

// leaf reads key's value v for flag f.
func (r *configReader) leaf(f cli.Flag, key string, k, v *yaml.Node) error {
	name := f.Names()[0]
	if name == ConfigFlag {
		if v.Kind == yaml.ScalarNode && (v.Value == "" || v.Tag == "!!null") {
			return nil // input_config's key, from a run without one
		}
		return r.errorf(k, "%s: a config file cannot load another (drop the key)", key)
	}
	if line, dup := r.seen[name]; dup {
		return r.errorf(k, "%s sets --%s again (first at line %d)", key, name, line)
	}
	r.seen[name] = k.Line
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	s := setting{flag: name, key: key, line: v.Line}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return nil // no value: the flag's default
		}
		s.values = []string{v.Value}
	case yaml.SequenceNode:
		if kindOf(f) == argSwitch {
			return r.errorf(v, "%s: want true or false, got a list", key)
		}
		items := make([]string, 0, len(v.Content))
		for _, it := range v.Content {
			if it.Kind == yaml.AliasNode && it.Alias != nil {
				it = it.Alias
			}
			s, err := r.item(f, key, it)
			if err != nil {
				return err
			}
			items = append(items, s)
		}
		if isList(f) {
			s.values = items
		} else {
			// A stage list (concurrency: [1, 2, 4]) as the flag reads one.
			s.values = []string{strings.Join(items, ",")}
		}
	case yaml.MappingNode:
		if !isWholeList(f) {
			return r.errorf(v, "%s: want a value, got a mapping", key)
		}
		obj, err := jsonOf(v)
		if err != nil {
			return r.errorf(v, "%s: %v", key, err)
		}
		s.values = []string{obj}
	default:
		return r.errorf(v, "%s: want a value", key)
	}
	for _, val := range s.values {
		if strings.Contains(val, Redacted) {
			return r.errorf(v, "%s holds %s, an export's mark for a secret: give the secret itself (or leave the key out)", key, Redacted)
		}
	}
	r.out = append(r.out, s)
	return nil
}

// item is one list item as its flag reads it: a scalar as written; for a
// flag of key:value items (--extra-inputs, --header) a mapping, or a
// [key, value] pair as input_config lists them, as a JSON object.
func (r *configReader) item(f cli.Flag, key string, it *yaml.Node) (string, error) {
	switch {
	case it.Kind == yaml.ScalarNode:
		return it.Value, nil
	case isWholeList(f) && it.Kind == yaml.MappingNode:
	case isWholeList(f) && it.Kind == yaml.SequenceNode && len(it.Content) == 2 && it.Content[0].Kind == yaml.ScalarNode:
		var val any
		if err := it.Content[1].Decode(&val); err != nil {
			return "", r.errorf(it, "%s: %v", key, err)
		}
		b, err := json.Marshal(map[string]any{it.Content[0].Value: val})
		if err != nil {
			return "", r.errorf(it, "%s: %v", key, err)
		}
		return string(b), nil
	default:
		return "", r.errorf(it, "%s: want a list of values", key)
	}
	obj, err := jsonOf(it)
	if err != nil {
		return "", r.errorf(it, "%s: %v", key, err)
	}
	return obj, nil
}

// jsonOf is a YAML mapping as a JSON object.
func jsonOf(n *yaml.Node) (string, error) {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	return string(b), nil
}

// isList reports whether f collects values (several Sets add up).
func isList(f cli.Flag) bool {
	_, ok := f.(*repeatableFlag)
	return ok || kindOf(f) == argMany
}

// isWholeList reports whether f is a list whose items may be JSON objects
// (--extra-inputs, --header).
func isWholeList(f cli.Flag) bool {
	r, ok := f.(*repeatableFlag)
	if !ok {
		return false
	}
	lv, ok := r.Value.(*listValue)
	return ok && lv.whole
}

// applyConfigFile sets, from c.ConfigFile, every flag the command line
// did not set (nor its environment variable): the command line wins.
func (c *Config) applyConfigFile(cc *cli.Context) error {
	if c.ConfigFile == "" {
		return nil
	}
	data, err := readBounded(c.ConfigFile)
	if err != nil {
		return Usagef("--%s: %v", ConfigFlag, err)
	}
	settings, err := parseConfig(c.ConfigFile, data, newConfigKeys(cc.Command.Flags))
	if err != nil {
		return &UsageError{Err: err}
	}
	for _, s := range settings {
		if cc.IsSet(s.flag) || defaultZero(cc, s.flag, s.values) {
			continue
		}
		for _, v := range s.values {
			if err := cc.Set(s.flag, v); err != nil {
				return Usagef("%s:%d: %s: %q: %s", c.ConfigFile, s.line, s.key, v, wantFor(cc, s.flag, err))
			}
		}
	}
	return nil
}

// defaultZero reports a setting of 0 for a flag whose default is 0 and
// whose Limits refuse 0 given: a run's input_config writes every flag,
// those left unset at their default, and reading it back leaves them so.
func defaultZero(cc *cli.Context, name string, values []string) bool {
	lim, ok := numberLimits[name]
	if !ok || lim.Zero || len(values) != 1 {
		return false
	}
	if x, err := strconv.ParseFloat(strings.TrimSpace(values[0]), 64); err != nil || x != 0 {
		return false
	}
	for _, f := range cc.Command.Flags {
		if f.Names()[0] == name {
			now, _, ok := numbersOf(cc, f)
			return ok && len(now) == 1 && now[0].x == 0
		}
	}
	return false
}

// readBounded reads a file of at most MaxConfigBytes (a page of settings
// is a few KiB).
func readBounded(path string) ([]byte, error) {
	return bounded.ReadFile(context.Background(), path, MaxConfigBytes)
}

// wantFor says what flag name wants, for a value its Set refused.
func wantFor(cc *cli.Context, name string, err error) string {
	for _, f := range cc.Command.Flags {
		if f.Names()[0] != name {
			continue
		}
		switch f := f.(type) {
		case *intFlag, *cli.IntFlag:
			return "want an integer"
		case *uint64Flag:
			return "want a whole number ≥ 0"
		case *float64Flag, *cli.Float64Flag:
			return "want a number"
		case *boolFlag, *switchFlag, *cli.BoolFlag:
			return "want true or false"
		case *ValueFlag:
			switch f.Value.(type) {
			case *DurationValue:
				if err.Error() != "parse error" {
					return err.Error()
				}
				return "want a number (or inf)"
			case *sweepValue:
				return err.Error()
			}
		}
	}
	return err.Error()
}
