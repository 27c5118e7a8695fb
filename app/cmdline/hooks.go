package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// HookConfig is AIPerf's server control flags: a KV-cache reset and the
// server's profiler, called around each profile stage.
type HookConfig struct {
	// ResetKVCache is --reset-kv-cache; ResetKVCachePath its path ("":
	// vLLM's /reset_prefix_cache) and ResetKVCacheTimeout its timeout (0:
	// 30 s).
	ResetKVCache        bool
	ResetKVCachePath    string
	ResetKVCacheTimeout time.Duration
	// ServerProfiler is --server-profiler, with its start and stop paths
	// ("": /start_profile, /stop_profile) and timeout (0: 30 s).
	ServerProfiler                      bool
	ProfilerStartPath, ProfilerStopPath string
	ProfilerTimeout                     time.Duration
}

// hookOptions are the rows of those flags (flags.go's options holds them
// with the rest).
func hookOptions() []option {
	return []option{
		{flag: &cli.BoolFlag{Category: catTarget, Hidden: true, Name: "reset-kv-cache", Usage: "POST the server's KV-cache reset before each profile stage (after the warmup drains)"}, path: "endpoint.reset_kv_cache",
			field: func(c *Config) any { return &c.ResetKVCache }},
		{flag: &cli.StringFlag{Category: catTarget, Hidden: true, Name: "reset-kv-cache-path", Usage: "the reset's path (default /reset_prefix_cache, vLLM's; SGLang's is /flush_cache)"}, path: "endpoint.reset_kv_cache_path",
			field: func(c *Config) any { return &c.ResetKVCachePath }},
		{flag: &cli.Float64Flag{Category: catTarget, Hidden: true, Name: "reset-kv-cache-timeout-seconds", Usage: "seconds each reset request may take (default 30)"}, path: "endpoint.reset_kv_cache_timeout_seconds",
			field: func(c *Config) any { return Secs(&c.ResetKVCacheTimeout) }},
		{flag: &cli.BoolFlag{Category: catTarget, Hidden: true, Name: "server-profiler", Usage: "POST the server's profiler start before each profile stage and its stop after"}, path: "endpoint.server_profiler",
			field: func(c *Config) any { return &c.ServerProfiler }},
		{flag: &cli.StringFlag{Category: catTarget, Hidden: true, Name: "server-profiler-start-path", Usage: "the profiler start's path (default /start_profile)"}, path: "endpoint.server_profiler_start_path",
			field: func(c *Config) any { return &c.ProfilerStartPath }},
		{flag: &cli.StringFlag{Category: catTarget, Hidden: true, Name: "server-profiler-stop-path", Usage: "the profiler stop's path (default /stop_profile)"}, path: "endpoint.server_profiler_stop_path",
			field: func(c *Config) any { return &c.ProfilerStopPath }},
		{flag: &cli.Float64Flag{Category: catTarget, Hidden: true, Name: "server-profiler-timeout-seconds", Usage: "seconds each profiler request may take (default 30)"}, path: "endpoint.server_profiler_timeout_seconds",
			field: func(c *Config) any { return Secs(&c.ProfilerTimeout) }},
	}
}
