package history

// applicationID marks a database as surge's history (PRAGMA
// application_id, "SRGH"): another application's SQLite file is refused,
// not migrated.
const applicationID = 0x53524748

// migrations bring the schema from version i to i+1 (PRAGMA user_version
// counts the ones applied). Never edit one that shipped: add the next.
// docs/history.md documents the schema they build.
var migrations = []string{
	// 1: runs, their statistics.
	`CREATE TABLE runs (
		id                            INTEGER PRIMARY KEY,
		run_uid                       TEXT NOT NULL,
		benchmark_id                  TEXT,
		kind                          TEXT NOT NULL CHECK (kind IN ('run', 'stage')),
		repeat_index                  INTEGER NOT NULL DEFAULT 0,
		stage_index                   INTEGER NOT NULL DEFAULT -1,
		recorded_at                   TEXT NOT NULL,
		started_at                    TEXT,
		ended_at                      TEXT,
		label                         TEXT,
		artifact_dir                  TEXT NOT NULL,
		model                         TEXT,
		endpoint_type                 TEXT,
		endpoint                      TEXT,
		target                        TEXT,
		engine                        TEXT,
		server_version                TEXT,
		gpu                           TEXT,
		server_hash                   TEXT,
		workload_hash                 TEXT,
		config_hash                   TEXT,
		dataset_hash                  TEXT,
		tokenizer_hash                TEXT,
		load_mode                     TEXT,
		load_value                    REAL,
		surge_version                 TEXT,
		client_cpus                   INTEGER,
		client_gomaxprocs             INTEGER,
		request_count                 INTEGER,
		error_count                   INTEGER,
		duration_s                    REAL,
		request_throughput            REAL,
		output_token_throughput       REAL,
		output_token_throughput_lo    REAL,
		output_token_throughput_hi    REAL,
		total_token_throughput        REAL,
		ttft_p50_ms                   REAL,
		ttft_p95_ms                   REAL,
		ttft_p95_lo_ms                REAL,
		ttft_p95_hi_ms                REAL,
		ttft_p99_ms                   REAL,
		itl_p50_ms                    REAL,
		itl_p99_ms                    REAL,
		latency_p50_ms                REAL,
		latency_p95_ms                REAL,
		latency_p95_lo_ms             REAL,
		latency_p95_hi_ms             REAL,
		latency_p99_ms                REAL,
		cost_per_hour_usd             REAL,
		cost_per_1m_output_tokens_usd REAL,
		cost_per_1m_total_tokens_usd  REAL,
		was_cancelled                 INTEGER NOT NULL DEFAULT 0,
		UNIQUE (run_uid, repeat_index, stage_index)
	);
	CREATE INDEX runs_started ON runs (started_at);
	CREATE INDEX runs_workload ON runs (workload_hash, started_at);
	CREATE TABLE run_metrics (
		run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
		metric TEXT NOT NULL,
		stat   TEXT NOT NULL,
		value  REAL NOT NULL,
		unit   TEXT,
		PRIMARY KEY (run_id, metric, stat)
	) WITHOUT ROWID;`,
}
