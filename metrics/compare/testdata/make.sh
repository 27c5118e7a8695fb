#!/usr/bin/env bash
# Rewrites the compare test runs from live runs against two mocks (a few
# seconds). Run from the repository root: metrics/compare/testdata/make.sh
set -euo pipefail
D=metrics/compare/testdata
bin=$(mktemp -d)/surge
go build -o "$bin" .
"$bin" mock-server --port 18402 --ttft 20ms --itl 4ms >/dev/null 2>&1 & slow=$!
"$bin" mock-server --port 18401 --ttft 16ms --itl 4ms >/dev/null 2>&1 & fast=$!
trap 'kill $slow $fast' EXIT
sleep 1
run="--streaming --request-count 120 --isl 16 --osl 4 --random-seed 7 --ui none --no-gpu-telemetry --no-server-metrics -m mock"
rm -rf "$D"/{slow,fast,other-isl,sweep-slow,sweep-fast,merged}
"$bin" profile --url 127.0.0.1:18402 $run --concurrency 4 --output-artifact-dir $D/slow >/dev/null
"$bin" profile --url 127.0.0.1:18401 $run --concurrency 4 --output-artifact-dir $D/fast >/dev/null
"$bin" profile --url 127.0.0.1:18401 ${run/--isl 16/--isl 24} --concurrency 4 --output-artifact-dir $D/other-isl >/dev/null
sweep="${run/--request-count 120/--request-count 40} --concurrency 1,4"
"$bin" profile --url 127.0.0.1:18402 $sweep --output-artifact-dir $D/sweep-slow >/dev/null
"$bin" profile --url 127.0.0.1:18401 $sweep --output-artifact-dir $D/sweep-fast >/dev/null
# The fast run again, sent by two shards at once and merged.
tmp=$(mktemp -d)
start=$(date -u -d '+2 sec' +%Y-%m-%dT%H:%M:%S.%NZ)
"$bin" profile --url 127.0.0.1:18401 $run --concurrency 4 --shard 0/2 --start-at "$start" --output-artifact-dir "$tmp/s0" >/dev/null &
"$bin" profile --url 127.0.0.1:18401 $run --concurrency 4 --shard 1/2 --start-at "$start" --output-artifact-dir "$tmp/s1" >/dev/null
wait %3
"$bin" merge "$tmp/s0" "$tmp/s1" -o $D/merged >/dev/null
# Only the summary and the records are read; the rest would only be weight.
rm -f $D/*/inputs.json $D/*/profile_export_aiperf.csv $D/*/profile_export_surge_state.json
