// Package fingerprint hashes what a run measured, so two exports show at a
// glance whether they measured the same thing: the resolved configuration
// (secrets and the target left out), the dataset's request bodies, the
// tokenizer, surge's version and what the server says about itself.
//
// The workload hash covers the configuration, the dataset and the tokenizer:
// two runs with one workload hash sent the same requests, so their numbers
// compare, whatever servers they measured.
package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Fingerprint is the "fingerprint" object of an export. Each hash is
// "sha256:" and the first 16 hex digits (64 bits: enough to tell runs
// apart, short enough to read); an empty field was not known.
type Fingerprint struct {
	// Workload hashes Config, Dataset and Tokenizer together.
	Workload  string `json:"workload"`
	Config    string `json:"config"`
	Dataset   string `json:"dataset"`
	Tokenizer string `json:"tokenizer"`
	// Surge is surge's version string itself (no hash: people read it).
	Surge string `json:"surge_version"`
	// Server hashes ServerInfo.
	Server     string  `json:"server"`
	ServerInfo *Server `json:"server_info,omitempty"`
}

// Seal computes Workload (and Server from ServerInfo) from the other fields.
func (f *Fingerprint) Seal() {
	f.Workload = Sum([]byte("config " + f.Config + "\ndataset " + f.Dataset + "\ntokenizer " + f.Tokenizer + "\n"))
	if f.ServerInfo != nil {
		b, _ := json.Marshal(f.ServerInfo)
		f.Server = Sum(b)
	}
}

// Sum is the short hash of b.
func Sum(b []byte) string {
	h := sha256.Sum256(b)
	return short(h[:])
}

// Short writes a SHA-256 digest (32 bytes) in the fingerprint's form.
func Short(digest []byte) string { return short(digest) }

func short(h []byte) string { return "sha256:" + hex.EncodeToString(h[:8]) }

// notWorkload are input_config settings that say where and how a run was
// measured or shown, not what it sent: the target, credentials, telemetry,
// output and analysis settings. Two runs that differ only in these measured
// the same workload. A setting is named by the last part of its path
// ("endpoint.urls": urls); the flat names of older exports are here too.
var notWorkload = map[string]bool{
	"url": true, "urls": true, "url_selection_strategy": true, "api_key": true, "headers": true,
	"ui": true, "ui_type": true, "output_artifact_dir": true, "artifact_directory": true,
	"gpu_telemetry": true, "gpu_telemetry_interval": true, "no_gpu_telemetry": true,
	"server_metrics": true, "no_server_metrics": true, "server_metrics_interval": true, "server_metrics_formats": true,
	"knee_factor": true, "failed_request_threshold": true,
	"request_timeout_seconds": true, "timeout_seconds": true, "benchmark_grace_period": true, "report": true,
	"control_addr": true, "timestamps": true, "start_at": true,
	"log_level": true, "verbose": true, "extra_verbose": true,
	"profile_export_prefix": true, "export_level": true, "slice_duration": true,
	// Where the run is remembered, under what name, and what the server
	// costs: none changes what was sent, so a labelled or priced run
	// still matches its baseline (history:last-matching).
	"history": true, "no_history": true, "history_label": true, "cost_per_hour": true, "cost_per_hour_usd": true,
	// How the run checked and waited for its server, and what it wrote
	// besides: a peer's command line (vllm-bench's ready check, its
	// --save-detailed texts) sets these where an AIPerf line of the same
	// workload does not.
	"skip_preflight": true, "wait_for_model_timeout": true, "wait_for_model_mode": true, "wait_for_model_interval": true,
	"export_outputs_json": true, "auto_plot": true, "no_auto_plot": true,
	"server_profiler": true, "server_profiler_start_path": true, "server_profiler_stop_path": true, "server_profiler_timeout_seconds": true,
}

// Flatten turns a nested configuration (input_config as AIPerf nests it:
// {"endpoint": {"urls": […]}}) into one key per setting, its dotted path
// ("endpoint.urls"). A flat one (older exports) comes back as it was.
func Flatten(cfg map[string]any) map[string]any {
	out := make(map[string]any, len(cfg))
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = v
		}
	}
	walk("", cfg)
	return out
}

// leaf is the last part of a dotted setting path.
func leaf(key string) string { return key[strings.LastIndexByte(key, '.')+1:] }

// Secret reports whether a configuration key may hold a credential; such
// keys never enter a hash (a hash of a short secret can be brute-forced).
func Secret(key string) bool {
	k := strings.ToLower(leaf(key))
	return k == "headers" || strings.HasSuffix(k, "api_key") || strings.HasSuffix(k, "_key") ||
		strings.Contains(k, "secret") || strings.Contains(k, "password") || strings.Contains(k, "auth") ||
		strings.HasSuffix(k, "_token")
}

// InWorkload reports whether configuration key (a flat name or a dotted
// path) is part of the workload (and so of the config hash).
func InWorkload(key string) bool { return !notWorkload[leaf(key)] && !Secret(key) }

// Config hashes the workload part of a resolved configuration (the
// export's input_config): keys in canonical order, secrets and the
// non-workload keys left out, and so are keys at their zero value (0, "",
// false, empty): a later surge that adds a flag, off by default, hashes
// an older run's workload alike.
func Config(cfg map[string]any) string {
	cfg = Flatten(cfg)
	keep := make(map[string]any, len(cfg))
	for k, v := range cfg {
		if InWorkload(k) && !zero(v) {
			keep[k] = v
		}
	}
	// encoding/json writes map keys sorted: a canonical form.
	b, err := json.Marshal(keep)
	if err != nil {
		return ""
	}
	return Sum(b)
}

// zero reports whether v is a zero value or an empty list or object.
func zero(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Map:
		return r.Len() == 0
	}
	return r.IsZero()
}

// Dataset hashes request bodies as a set of (session, turn, body): the order
// they were sent in (which concurrency makes vary) does not change it. The
// zero value is ready to use; not safe for concurrent use.
type Dataset struct {
	items [][32]byte
}

// Add adds one request body.
func (d *Dataset) Add(session string, turn int, body []byte) {
	h := sha256.New()
	h.Write([]byte(session))
	h.Write([]byte{0})
	var t [8]byte
	for i := range t {
		t[i] = byte(uint64(turn) >> (8 * i))
	}
	h.Write(t[:])
	h.Write(body)
	var s [32]byte
	h.Sum(s[:0])
	d.items = append(d.items, s)
}

// Len is the number of bodies added.
func (d *Dataset) Len() int { return len(d.items) }

// Sum returns the hash of the set ("" when empty).
func (d *Dataset) Sum() string {
	if len(d.items) == 0 {
		return ""
	}
	items := slices.Clone(d.items)
	slices.SortFunc(items, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) }) // no string copies per compare
	h := sha256.New()
	for _, it := range items {
		h.Write(it[:])
	}
	return short(h.Sum(nil))
}
