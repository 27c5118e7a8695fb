#!/usr/bin/env bash
# bench/scaling.sh — how the load surge times honestly grows with client
# cores, and where it stops growing (issue 36).
#
# Builds surge and bench/benchtool once, then for client core counts 1, 2,
# 4, … up to nproc (the last one nproc itself):
#
#   calibrate  `surge calibrate` pinned to the client's cores (its mock is
#              embedded: it shares those cores), kept in a scratch file
#              ($SURGE_CALIBRATION_FILE): the highest stream count × token
#              rate with read delay p99 < 1 ms and ≤ 1% of first tokens read
#              with the next, and the core count it measured with.
#   burst      a fixed heavy burst, the same at every core count: `surge
#              mock-server` pinned to the cores the client does not use (all
#              of them, shared, at the last count), `surge profile` pinned to
#              the client's: BURST_STREAMS (256) streams started together, ITL
#              2 ms, 64 identical tokens each, BURST_WAVES waves, kernel
#              timestamps. Reported: tokens/s offered and delivered, read
#              delay p99, first tokens read with the next, whether that load
#              was timed honestly (p99 < 1 ms and ≤ 1%), and CPU per token
#              (user+sys from the kernel's rusage, less a one-request run's
#              start-up, over the tokens). Then the same burst once more by
#              `benchtool bare`, the smallest Go client (bench/README.md):
#              its shared first tokens and CPU a token are what the machine
#              allows any client on those cores.
#   profile    the same burst once more under `perf record -g` (when perf
#              can sample this user's processes), with the dashboard drawn
#              (through `script`, a pseudo-terminal) so that its snapshots
#              are in the profile: the top entries by own time, and the
#              share of surge's shared points — the dispatcher, the record
#              shards, the JSONL writer, the digest merges, the dashboard's
#              snapshot, lock and scheduler waits — as a share of the
#              client's CPU, as a fraction of one core (a single goroutine
#              near 1.0 is what stops the scaling), as CPU a request, and
#              as the request rate at which each of those goroutines would
#              fill a core (so a small machine's profile says where a big
#              one stops).
#
# Needs Go, bash, awk and taskset; perf and script are optional. Everything
# stays on 127.0.0.1. A full run on 2 cores takes 1.5–2.5 minutes.
#
#   bench/scaling.sh              # full run
#   QUICK=1 bench/scaling.sh      # small steps and bursts (≈ 1 min)
#   CORES="1 2" bench/scaling.sh  # these client core counts only
#   KEEP=1 bench/scaling.sh       # keep the scratch folder (every export, perf.data)
#   BURST_STREAMS=1024 BURST_WAVES=8 BURST_OSL=8 PERF=0 …
#   (short outputs, BURST_OSL=8, weigh the per-request points — the
#   dispatcher — against the per-token ones)
set -euo pipefail

cd "$(dirname "$0")/.."
quick=${QUICK:-0}
ncpu=$(nproc)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/surge-scaling.XXXXXX")
mock_pid=""
cleanup() {
	if [[ -n $mock_pid ]]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
	if [[ ${KEEP:-0} == 1 ]]; then echo "scratch kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

command -v taskset >/dev/null || { echo "scaling.sh needs taskset (util-linux) to pin client and server" >&2; exit 2; }

if [[ -n ${CORES:-} ]]; then
	read -r -a cores <<<"$CORES"
else
	cores=()
	for ((c = 1; c < ncpu; c *= 2)); do cores+=("$c"); done
	cores+=("$ncpu")
fi
for c in "${cores[@]}"; do
	if ! [[ $c =~ ^[0-9]+$ ]] || ((c < 1 || c > ncpu)); then
		echo "CORES: $c is not a core count between 1 and $ncpu" >&2
		exit 2
	fi
done

streams=${BURST_STREAMS:-$((quick == 1 ? 128 : 256))}
waves=${BURST_WAVES:-$((quick == 1 ? 2 : 8))}
osl=${BURST_OSL:-64}
if ! [[ $osl =~ ^[0-9]+$ ]] || ((osl < 2)); then echo "BURST_OSL: want at least 2 tokens, got $osl" >&2; exit 2; fi
cal_args=(--max-streams "$((quick == 1 ? 32 : 1024))")
((quick == 1)) && cal_args+=(--itl 2ms --tokens 20)

perf_ok=0
if [[ ${PERF:-1} == 1 ]] && command -v perf >/dev/null && perf record -q -o "$tmp/perf.probe" -- true >/dev/null 2>&1; then
	perf_ok=1
fi
ui=(--ui none)
command -v script >/dev/null && ui=(--ui dashboard)

echo "building surge and benchtool into $tmp ..." >&2
go build -o "$tmp/surge" .
go build -o "$tmp/benchtool" ./bench/benchtool
surge=$tmp/surge
bt=$tmp/benchtool
get() { "$bt" get "$@"; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# start_mock CPUS ARGS...: start the mock pinned to CPUS on a free port, set $mock_url.
start_mock() {
	local cpus=$1 log=$tmp/mock.$RANDOM.log
	shift
	taskset -c "$cpus" "$surge" mock-server --port 0 "$@" 2>"$log" &
	mock_pid=$!
	for _ in $(seq 100); do
		mock_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -1 || true)
		[[ -n $mock_url ]] && return 0
		sleep 0.05
	done
	echo "mock server did not start:" >&2
	cat "$log" >&2
	exit 1
}

stop_mock() {
	kill "$mock_pid" 2>/dev/null || true
	wait "$mock_pid" 2>/dev/null || true
	mock_pid=""
}

# profile DIR CPUS CONCURRENCY COUNT OSL PERF EXTRA...: run surge profile
# pinned to CPUS under benchtool run (rusage into DIR/usage.json); PERF=1
# runs it under perf record (DIR/perf.data), on a pseudo-terminal when the
# dashboard is asked for.
profile() {
	local dir=$1 cpus=$2 conc=$3 count=$4 osl=$5 perf=$6
	shift 6
	mkdir -p "$dir"
	local cmd=(taskset -c "$cpus" "$surge" profile --url "$mock_url" --model mock \
		--streaming --concurrency "$conc" --request-count "$count" --isl 128 --osl "$osl" --timestamps kernel \
		--no-gpu-telemetry --no-server-metrics --output-artifact-dir "$dir" "$@")
	if ((perf)); then
		cmd=(perf record -q -F 4999 -g -k CLOCK_REALTIME -o "$dir/perf.data" -- "${cmd[@]}")
	fi
	if [[ " $* " == *" --ui dashboard "* ]]; then
		# script -c takes one string: every word quoted for the shell it runs.
		cmd=(script -qefc "$(printf '%q ' "${cmd[@]}")" /dev/null)
	fi
	"$bt" run -o "$dir/usage.json" -- "${cmd[@]}" >"$dir/stdout.txt" 2>"$dir/stderr.txt" </dev/null || {
		echo "surge profile ($dir) failed:" >&2
		tail -20 "$dir/stderr.txt" >&2
		exit 1
	}
}

# points DIR: from DIR/perf.data, the samples taken between the first
# request and the last response (the export's start_time and end_time; perf
# stamps samples with the same wall clock), the shared points' share of the
# client's CPU and as a fraction of one core (inclusive time ÷ that span),
# and the top entries by own time.
points() {
	local data=$1/perf.data from to wall total
	from=$(date -d "$(get "$1/profile_export_aiperf.json" start_time)" +%s.%N)
	to=$(date -d "$(get "$1/profile_export_aiperf.json" end_time)" +%s.%N)
	wall=$(awk -v a="$from" -v b="$to" 'BEGIN { print b - a }')
	local span=(--time "$from,$to")
	total=$(perf report -i "$data" "${span[@]}" --stdio -g none 2>/dev/null | awk '/^# Event count/ { print $NF; exit }')
	echo "    load phase ${wall}s: $(awk -v t="${total:-0}" -v w="$wall" 'BEGIN { printf "%.2f", t / 1e9 / w }') cores busy on average (perf samples, user space and what the VM shows of the kernel)"
	perf report -i "$data" "${span[@]}" --stdio --children --sort symbol -g none 2>/dev/null >"$data.children.txt" || true
	perf report -i "$data" "${span[@]}" --stdio --no-children --sort symbol -g none 2>/dev/null >"$data.self.txt" || true
	reqs=$(get "$1/profile_export_aiperf.json" request_count.avg)
	shards=$(get "$1/profile_export_aiperf.json" run_info.client_cores.gomaxprocs 2>/dev/null || echo "$2")
	awk -v total="$total" -v wall="$wall" -v reqs="$reqs" -v shards="$shards" '
		# Lines: "  Children%  Self%  [.] symbol ...".
		/^ +[0-9.]+%/ {
			c = $1; s = $2; sub("%", "", c); sub("%", "", s)
			sym = $4
			inc[sym] += c; own[sym] += s
		}
		# show NAME PCT GOROUTINES: its share of the client CPU, of one
		# core (÷ goroutines that share the work), its CPU a request and
		# the request rate at which those goroutines would each fill a core.
		# GOROUTINES 0: many (a goroutine per request, the runtime ones): core
		# is then the cores they keep busy together, and there is no ceiling.
		# PER "frame": the cost is the dashboard redraw (10 a second), not a
		# request: the column is then CPU a frame.
		function show(name, p, n, per,    us, core, ceil, count) {
			count = per == "frame" ? wall * 10 : reqs
			us = count > 0 ? p / 100 * total / 1e3 / count : 0
			core = wall > 0 ? p / 100 * total / 1e9 / wall / (n > 0 ? n : 1) : 0
			ceil = (n > 0 && us > 0 && per != "frame") ? sprintf("%.0f req/s", n * 1e6 / us) : "-"
			printf "    %-38s %5.1f%% %6.2f %8.1f µs a %-7s %s\n", name, p, core, us, (per == "frame" ? "frame" : "request"), ceil
		}
		END {
			printf "    %-38s %6s %6s %19s  %s\n", "", "CPU", "core", "CPU", "each goroutine a full core at"
			show("streams (a goroutine per request)", inc["github.com/surgebench/surge/loadgen.(*Generator).session"], 0)
			show("dispatcher (issue loop)", inc["github.com/surgebench/surge/loadgen.(*Generator).issue"], 1)
			show("dispatcher (lookahead: request bodies)", inc["github.com/surgebench/surge/loadgen.(*Generator).lookahead.func1"], 1)
			show("record shards (" shards " goroutines)", inc["github.com/surgebench/surge/metrics.(*shard).run"], shards)
			show("  of which JSONL lines", inc["github.com/surgebench/surge/metrics/export.(*JSONL).WriteRecord"], shards)
			show("  of which snapshot views", inc["github.com/surgebench/surge/metrics.(*shard).view"], shards, "frame")
			show("JSONL held lines (timer)", inc["github.com/surgebench/surge/metrics/export.(*JSONL).WriteHeld"], 1)
			show("dashboard snapshot (merge of views)", inc["github.com/surgebench/surge/metrics.(*Collector).Snapshot"], 1, "frame")
			show("digest merges (aggregate.merge, all)", inc["github.com/surgebench/surge/metrics.(*aggregate).merge"], 0)
			show("locks (lock2, Mutex.lockSlow: own)", own["runtime.lock2"] + own["sync.(*Mutex).lockSlow"], 0)
			show("scheduler (findRunnable)", inc["runtime.findRunnable"], 0)
			show("garbage collector (mark workers)", inc["runtime.gcBgMarkWorker"], 0)
		}' "$data.children.txt"
	echo "    top entries by own time:"
	awk '/^ +[0-9.]+%/ && n < 8 { printf "      %6s  %s\n", $1, $3 " " $4; n++ }' "$data.self.txt"
}

rows=() details=() notes=()
fmt='%5s %-7s %-7s %6s | %-22s %9s %8s | %9s %9s %8s %7s %-6s %7s | %7s %7s'
header=$(printf "$fmt" cores client server load "calibrate: best" "tok/s" "p99 ms" "offered" "tok/s" "p99 ms" "shared" honest "µs/tok" "shared" "µs/tok")

# The start-up a run pays once (flags, the tokenizer that builds prompts),
# measured on one core and subtracted from every burst's CPU.
echo "start-up baseline (1 request, 1 core) ..." >&2
start_mock "$((ncpu > 1 ? 1 : 0))" --ttft 0 --itl 0 --output-tokens 1
profile "$tmp/base" 0 1 1 1 0 --ui none
stop_mock
base_cpu=$(awk -v u="$(get "$tmp/base/usage.json" user_s)" -v s="$(get "$tmp/base/usage.json" sys_s)" 'BEGIN { print u + s }')

for c in "${cores[@]}"; do
	client="0-$((c - 1))"
	if ((c < ncpu)); then server="$c-$((ncpu - 1))"; else server="0-$((ncpu - 1))"; fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	echo "== client cores $client, server cores $server (load average $load)" >&2

	# --- calibrate's search ------------------------------------------------
	echo "calibrate on $c core(s) ..." >&2
	cal=$tmp/cal$c.json
	SURGE_CALIBRATION_FILE=$cal taskset -c "$client" "$surge" calibrate "${cal_args[@]}" >"$tmp/cal$c.txt" 2>&1 || {
		echo "surge calibrate failed:" >&2
		tail -20 "$tmp/cal$c.txt" >&2
		exit 1
	}
	cat "$tmp/cal$c.txt" >&2
	best="none passed"
	if [[ $(get "$cal" streams) != 0 ]]; then best="$(get "$cal" streams) @ $(get "$cal" itl_ms) ms"; fi
	cal_cores=$(get "$cal" gomaxprocs 2>/dev/null || echo "?")
	cal_tps=$(awk -v v="$(get "$cal" tokens_per_sec)" 'BEGIN { printf "%.0f", v }')
	cal_p99=$(awk -v v="$(get "$cal" read_delay_p99_ms)" 'BEGIN { printf "%.3f", v }')

	# --- the fixed burst, timed ---------------------------------------------
	echo "burst: $streams streams × $waves waves, ITL 2 ms, $osl tokens, client on $client ..." >&2
	d=$tmp/burst$c
	start_mock "$server" --ttft 20ms --itl 2ms --output-tokens "$osl"
	profile "$d" "$client" "$streams" "$((streams * waves))" "$osl" 0 --ui none
	stop_mock
	toks=$(get "$d/profile_export_aiperf.json" total_output_tokens.avg)
	tps=$(awk -v v="$(get "$d/profile_export_aiperf.json" output_token_throughput.avg)" 'BEGIN { printf "%.0f", v }')
	p99=$(awk -v v="$(get "$d/profile_export_aiperf.json" client_read_delay.p99)" 'BEGIN { printf "%.3f", v }')
	sh=$(get "$d/profile_export_aiperf.json" first_token_shared_read.avg 2>/dev/null || echo 0)
	reqs=$(get "$d/profile_export_aiperf.json" request_count.avg)
	shpct=$(awk -v s="$sh" -v n="$reqs" 'BEGIN { printf "%.1f%%", 100 * s / n }')
	honest=$(awk -v p="$p99" -v s="$sh" -v n="$reqs" 'BEGIN { print (p < 1 && 100 * s / n <= 1) ? "yes" : "no" }')
	us=$(awk -v u="$(get "$d/usage.json" user_s)" -v s="$(get "$d/usage.json" sys_s)" -v b="$base_cpu" -v n="$toks" \
		'BEGIN { printf "%.2f", (u + s - b) * 1e6 / n }')

	# --- the same burst, by the reference client ------------------------------
	# benchtool bare (see bench/README.md): what this machine allows any Go
	# client on these cores; it measures no read delay, only shared first
	# tokens, and its CPU includes its (small) start-up.
	echo "burst: the reference client (benchtool bare) on $client ..." >&2
	r=$tmp/bare$c
	mkdir -p "$r"
	start_mock "$server" --ttft 20ms --itl 2ms --output-tokens "$osl"
	"$bt" run -o "$r/usage.json" -- taskset -c "$client" "$bt" bare -url "$mock_url" -concurrency "$streams" \
		-n "$((streams * waves))" -osl "$osl" -o "$r/records.jsonl" 2>"$r/stderr.txt" || {
		echo "benchtool bare failed:" >&2
		tail -20 "$r/stderr.txt" >&2
		exit 1
	}
	stop_mock
	rsh=$(grep -c '"first_token_shared_read":true' "$r/records.jsonl" || true)
	rshpct=$(awk -v s="$rsh" -v n="$((streams * waves))" 'BEGIN { printf "%.1f%%", 100 * s / n }')
	rus=$(awk -v u="$(get "$r/usage.json" user_s)" -v s="$(get "$r/usage.json" sys_s)" -v n="$((streams * waves * osl))" \
		'BEGIN { printf "%.2f", (u + s) * 1e6 / n }')
	rows+=("$(printf "$fmt" "$c" "$client" "$server" "$load" "$best (GOMAXPROCS $cal_cores)" "$cal_tps" "$cal_p99" \
		"$((streams * 500))" "$tps" "$p99" "$shpct" "$honest" "$us" "$rshpct" "$rus")")

	# --- the same burst, profiled -------------------------------------------
	if ((perf_ok)); then
		echo "burst under perf (${ui[*]}) ..." >&2
		p=$tmp/perf$c
		mkdir -p "$p"
		start_mock "$server" --ttft 20ms --itl 2ms --output-tokens "$osl"
		profile "$p" "$client" "$streams" "$((streams * waves))" "$osl" 1 "${ui[@]}"
		stop_mock
		details+=("  $c client core(s) ($client; server $server), perf ${ui[*]}, $(get "$p/profile_export_aiperf.json" client_read_delay.p99) ms read delay p99 under perf:")
		details+=("$(points "$p" "$c")")
	fi
done

# --- what this machine could not show ------------------------------------------
((ncpu >= 16)) || notes+=("only $ncpu cores: client core counts above $ncpu (the 4, 8, 16 a bigger machine runs) were not measured here")
notes+=("at $ncpu client cores the mock shares the client's cores (no core is left for it): that row is a lower bound of the client, not its ceiling")
notes+=("surge calibrate embeds its mock: its search shares the client's cores with the server at every count")
((perf_ok)) || notes+=("perf is missing or may not sample here (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?)): no profile")
((perf_ok)) && notes+=("perf samples user space and only what the VM lets it of the kernel (perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo ?)): system time is under-attributed")
[[ ${ui[*]} == "--ui none" ]] && notes+=("no \`script\` for a pseudo-terminal: the dashboard's snapshot was not profiled")

echo
echo "surge scaling — $ncpu cores ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //')), $(uname -sr), $(go version | awk '{print $3}'), burst $streams streams × $waves waves × $osl tokens at ITL 2 ms, start-up ${base_cpu}s subtracted"
echo "load = 1-minute load average as the row began; calibrate = surge calibrate pinned to the client cores (embedded mock); burst = offered and delivered tokens/s, read delay p99, first tokens read with the next, CPU a token; bare = the same burst by benchtool bare (the machine's floor)"
echo "$header"
for r in "${rows[@]}"; do echo "$r"; done
if ((${#details[@]})); then
	echo
	echo "where the time goes (the burst under perf, load phase only; CPU = share of the client's, inclusive; core = fraction of one core each goroutine keeps busy):"
	for r in "${details[@]}"; do echo "$r"; done
fi
echo
echo "not measured on this machine:"
for n in "${notes[@]}"; do echo "  - $n"; done
