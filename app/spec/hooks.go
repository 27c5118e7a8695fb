package spec

import (
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
)

// Hooks are the server control calls around each profile stage: a
// KV-cache reset before it, the server's profiler started before it and
// stopped after it (AIPerf's --reset-kv-cache and --server-profiler).
type Hooks struct {
	Reset        bool
	ResetPath    string
	ResetTimeout time.Duration
	Profiler     bool
	// StartPath and StopPath are the profiler's paths.
	StartPath, StopPath string
	ProfilerTimeout     time.Duration
}

// AIPerf's control hook defaults.
const (
	DefaultResetPath    = "/reset_prefix_cache"
	DefaultStartPath    = "/start_profile"
	DefaultStopPath     = "/stop_profile"
	defaultHookTimeout  = 30 * time.Second
	hookPathMaxLen      = 1024
	hookNeedsResetFlag  = "--reset-kv-cache"
	hookNeedsProfFlag   = "--server-profiler"
	hookNotLiveOrSearch = "runs between a plan's stages: not with a live or search session"
)

// parseHooks reads the control hook flags: relative paths, timeouts > 0,
// each sub-flag with its hook, and a planned run to hook into.
func parseHooks(s *Spec, c *cmdline.Config) error {
	h := Hooks{Reset: c.ResetKVCache, ResetPath: orDefault(c.ResetKVCachePath, DefaultResetPath),
		ResetTimeout: c.ResetKVCacheTimeout, Profiler: c.ServerProfiler, StartPath: orDefault(c.ProfilerStartPath, DefaultStartPath),
		StopPath: orDefault(c.ProfilerStopPath, DefaultStopPath), ProfilerTimeout: c.ProfilerTimeout}
	for _, f := range []struct {
		flag, path string
		set        bool
		needs      string
		on         bool
	}{{"--reset-kv-cache-path", c.ResetKVCachePath, c.ResetKVCachePath != "", hookNeedsResetFlag, h.Reset},
		{"--reset-kv-cache-timeout-seconds", "", c.ResetKVCacheTimeout != 0, hookNeedsResetFlag, h.Reset},
		{"--server-profiler-start-path", c.ProfilerStartPath, c.ProfilerStartPath != "", hookNeedsProfFlag, h.Profiler},
		{"--server-profiler-stop-path", c.ProfilerStopPath, c.ProfilerStopPath != "", hookNeedsProfFlag, h.Profiler},
		{"--server-profiler-timeout-seconds", "", c.ProfilerTimeout != 0, hookNeedsProfFlag, h.Profiler}} {
		switch {
		case f.set && !f.on:
			return cmdline.Usagef("%s sets a control call of %s: give %s too", f.flag, f.needs, f.needs)
		case f.path != "" && (!strings.HasPrefix(f.path, "/") || strings.Contains(f.path, "://") || len(f.path) > hookPathMaxLen || strings.ContainsAny(f.path, " ?#\n")):
			return cmdline.Usagef("%s %q: want a path on the server, such as /reset_prefix_cache", f.flag, f.path)
		}
	}
	switch {
	case c.ResetKVCacheTimeout < 0:
		return cmdline.Usagef("--reset-kv-cache-timeout-seconds must be > 0")
	case c.ProfilerTimeout < 0:
		return cmdline.Usagef("--server-profiler-timeout-seconds must be > 0")
	case (h.Reset || h.Profiler) && (c.Search != nil || c.ControlAddr != ""):
		flag := hookNeedsResetFlag
		if !h.Reset {
			flag = hookNeedsProfFlag
		}
		return cmdline.Usagef("%s %s", flag, hookNotLiveOrSearch)
	}
	if h.ResetTimeout == 0 {
		h.ResetTimeout = defaultHookTimeout
	}
	if h.ProfilerTimeout == 0 {
		h.ProfilerTimeout = defaultHookTimeout
	}
	s.Hooks = h
	return nil
}

// orDefault is v, or d when v is empty.
func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
