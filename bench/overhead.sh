#!/usr/bin/env bash
# bench/overhead.sh — proves the client is not the bottleneck (issue 7).
#
# Builds surge once, then for each scenario starts `surge mock-server` on a
# free 127.0.0.1 port and runs `surge profile` against it under
# bench/benchtool, which reports the client's CPU time and peak RSS from the
# kernel's rusage. Needs only Go, bash and awk. Everything stays on
# 127.0.0.1; every scenario ends by itself; the whole script takes about
# 2–4 minutes.
#
#   bench/overhead.sh            # all scenarios
#   QUICK=1 bench/overhead.sh    # smaller runs (a smoke test, ~1 min)
#   KEEP=1 bench/overhead.sh     # keep the scratch folder with every export
#
# Scenarios and targets (2 cores):
#   cpu/token   mock with zero ITL, 256 tokens per request, concurrency 64
#               and 512: client (user+sys) CPU / total_output_tokens ≤ 2 µs
#   rss/stream  1,000 and 10,000 concurrent open streams (mock ITL 1 s):
#               (peak RSS − baseline peak RSS) / streams ≤ 100 KiB
#   ttft error  concurrency 256, ITL 2 ms, TTFT 20 ms: surge's TTFT p50/p99
#               minus the mock's own (its /stats) ≤ 1 ms / ≤ 3 ms
set -euo pipefail

cd "$(dirname "$0")/.."
quick=${QUICK:-0}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/surge-overhead.XXXXXX")
mock_pid=""
cleanup() {
	if [[ -n $mock_pid ]]; then kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true; fi
	if [[ ${KEEP:-0} == 1 ]]; then echo "scratch kept in $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

echo "building surge and benchtool into $tmp ..." >&2
go build -o "$tmp/surge" .
go build -o "$tmp/benchtool" ./bench/benchtool
surge=$tmp/surge
bt=$tmp/benchtool

# Each process needs one fd per stream (and the mock one per connection):
# raise the soft limit to the hard limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fds=$(ulimit -n)
echo "open-file limit: $fds per process" >&2

# start_mock ARGS...: start the mock on a free port, set $mock_url.
start_mock() {
	local log=$tmp/mock.$RANDOM.log
	"$surge" mock-server --port 0 "$@" 2>"$log" &
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

# profile NAME CONCURRENCY COUNT EXTRA...: run the client under benchtool.
profile() {
	local name=$1 conc=$2 count=$3
	shift 3
	mkdir -p "$tmp/$name"
	"$bt" run -o "$tmp/$name/usage.json" -- "$surge" profile --url "$mock_url" --model mock --streaming \
		--concurrency "$conc" --request-count "$count" --isl 128 --ui none \
		--no-gpu-telemetry --no-server-metrics --output-artifact-dir "$tmp/$name" "$@" \
		>"$tmp/$name/stdout.txt" 2>"$tmp/$name/stderr.txt" || {
		echo "surge profile ($name) failed:" >&2
		tail -20 "$tmp/$name/stderr.txt" >&2
		exit 1
	}
}

get() { "$bt" get "$@"; }

rows=()
fmt='%-38s %10s %-4s %8s  %-6s %s'
# row SCENARIO VALUE UNIT TARGET [DETAIL]: pass when VALUE ≤ TARGET.
row() {
	local verdict
	verdict=$(awk -v v="$2" -v t="$4" 'BEGIN { print (v <= t) ? "pass" : "FAIL" }')
	rows+=("$(printf "$fmt" "$1" "$2" "$3" "≤ $4" "$verdict" "${5:-}")")
	echo "  $1: $2 $3 (target ≤ $4) $verdict ${5:-}" >&2
}

# --- client CPU per streamed token --------------------------------------
# Start-up (flag parsing, the embedded tokenizer that builds the prompts)
# is paid once per process, not per token: a one-request run of the same
# client measures it, and is subtracted.
echo "cpu/token: start-up baseline (1 request) ..." >&2
start_mock --ttft 0 --itl 0 --output-tokens 1
profile cpu-base 1 1 --osl 1
stop_mock
base_cpu=$(awk -v u="$(get "$tmp/cpu-base/usage.json" user_s)" -v s="$(get "$tmp/cpu-base/usage.json" sys_s)" 'BEGIN { print u + s }')
for conc in 64 512; do
	reqs=$((conc * (quick == 1 ? 4 : 16)))
	echo "cpu/token: concurrency $conc, $reqs requests × 256 tokens, zero ITL ..." >&2
	start_mock --ttft 0 --itl 0 --output-tokens 256
	profile "cpu$conc" "$conc" "$reqs" --osl 256
	stop_mock
	d=$tmp/cpu$conc
	toks=$(get "$d/profile_export_aiperf.json" total_output_tokens.avg)
	user=$(get "$d/usage.json" user_s)
	sys=$(get "$d/usage.json" sys_s)
	us=$(awk -v u="$user" -v s="$sys" -v b="$base_cpu" -v n="$toks" 'BEGIN { printf "%.2f", (u + s - b) * 1e6 / n }')
	row "client CPU per token, concurrency $conc" "$us" "µs" 2 "$toks tokens, user ${user}s sys ${sys}s, start-up ${base_cpu}s subtracted"
done

# --- peak RSS per open stream -------------------------------------------
# Streams of 4 tokens 1 s apart stay open ≈ 3 s: every request of a run is
# in flight at once. The baseline is the same client with 10 streams.
echo "rss: baseline (10 streams) ..." >&2
start_mock --ttft 0 --itl 1s --output-tokens 4
profile rss-base 10 10 --osl 4
base=$(get "$tmp/rss-base/usage.json" max_rss_kib)
for n in 1000 10000; do
	if ((n + 64 > fds)); then
		rows+=("$(printf "$fmt" "RSS per open stream, $n streams" "-" "KiB" "≤ 100" "skip" "ulimit -n is $fds")")
		continue
	fi
	echo "rss: $n concurrent streams ..." >&2
	profile "rss$n" "$n" "$n" --osl 4 --request-timeout-seconds 60
	d=$tmp/rss$n
	peak=$(get "$d/usage.json" max_rss_kib)
	failed=$(get "$d/profile_export_aiperf.json" error_request_count.avg)
	kib=$(awk -v p="$peak" -v b="$base" -v n="$n" 'BEGIN { printf "%.1f", (p - b) / n }')
	row "RSS per open stream, $n streams" "$kib" "KiB" 100 "peak ${peak} KiB, baseline ${base} KiB, $failed failed"
done
stop_mock

# --- TTFT measurement error ---------------------------------------------
ttft_reqs=$((quick == 1 ? 512 : 2560))
echo "ttft: concurrency 256, $ttft_reqs requests, TTFT 20 ms, ITL 2 ms ..." >&2
start_mock --ttft 20ms --itl 2ms --output-tokens 64
# A warmup of one request per stream opens the 256 connections first: the
# mock's clock starts in its handler, after the TCP handshake, so the
# client's must be compared on warm connections too.
# Output lengths vary (64 ± 16 tokens), as real ones do: identical lengths
# make all 256 streams end and restart in the same millisecond, a burst
# that measures the two processes' fight for two cores, not the client.
profile ttft 256 "$ttft_reqs" --osl 64 --osl-stddev 16 --warmup-request-count 256
d=$tmp/ttft
stats=$tmp/ttft/mock_stats.json
# The mock's own TTFT quantiles: handler entry → first token flushed.
"$bt" fetch "$mock_url/stats" >"$stats"
stop_mock
for q in 50 99; do
	client=$(get "$d/profile_export_aiperf.json" "time_to_first_token.p$q")
	server=$(get "$stats" "ttft_p${q}_ms")
	err=$(awk -v c="$client" -v s="$server" 'BEGIN { printf "%.3f", c - s }')
	target=$((q == 50 ? 1 : 3))
	row "TTFT error p$q" "$err" "ms" "$target" "surge $client ms − mock's own $server ms"
done

# --- report ---------------------------------------------------------------
echo
echo "surge client overhead — $(nproc) cores, $(uname -sr), $(go version | awk '{print $3}')"
printf "$fmt\n" scenario value unit target result detail
for r in "${rows[@]}"; do echo "$r"; done
