#!/usr/bin/env bash
# Scaling and latency, against one mock server (CPU 0) with the C client (CPU 1):
#  1. rate and client CPU per notification with 1, 2, 4 and 8 connections (1000 streams each,
#     10,000 notifications outstanding per connection, as in scripts/bench.sh);
#  2. the same with 1, 2 and 4 I/O threads: one client with PUSH_OPT_IO_THREADS (one
#     connection per thread), then as many clients of one thread each;
#  3. latency from send to outcome (p50/p99, the library's own histogram) when sending at 50%
#     and 90% of the 1-connection rate measured in step 1.
# On 2 cores the one-threaded mock server is the ceiling for every row of step 1: the figure
# to watch is the client's CPU per notification, which should stay flat as connections grow.
# usage: scripts/bench-scaling.sh RELEASE_DIR PKI_DIR   (BENCH_COUNT, default 200000)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:?usage: bench-scaling.sh RELEASE_DIR PKI_DIR}" && pwd)
pki=$(cd "${2:?}" && pwd)
count=${BENCH_COUNT:-200000}
source scripts/mock-ctl.sh
mock_workspace
bench_cpus
build_load "$build" "$out/load"
MOCK_RUNNER=$server_cpu mock_start bench "$build/swiftpush-cli" "$pki"
port=$MOCK_PORT
load() {
  $client_cpu "$out/load" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app --quiet "$@" 2>/dev/null | grep '^load-result'
}
field() { sed -E "s/.* $1=([^ ]+).*/\1/"; }

echo "| connections | notifications/s | client CPU-µs per notification | peak RSS MB |"
echo "|---|---|---|---|"
base=0
for c in 1 2 4 8; do
  r=$(load --count "$count" --window $((c * 10000)) --connections "$c")
  rate=$(echo "$r" | field rate)
  [ "$c" = 1 ] && base=$rate
  printf '| %d | %s | %s | %s |\n' "$c" "$rate" "$(echo "$r" | field cpu_us_per_notification)" "$(echo "$r" | field peak_rss_mb)"
done
echo
echo "| I/O threads (1 connection each) | how | notifications/s | client CPU-µs per notification | peak RSS MB |"
echo "|---|---|---|---|---|"
for t in 1 2 4; do
  r=$(load --count "$count" --window $((t * 10000)) --connections "$t" --io-threads "$t")
  printf '| %d | PUSH_OPT_IO_THREADS | %s | %s | %s |\n' "$t" "$(echo "$r" | field rate)" "$(echo "$r" | field cpu_us_per_notification)" "$(echo "$r" | field peak_rss_mb)"
done
for t in 2 4; do
  r=$(load --count "$count" --window $((t * 10000)) --clients "$t")
  printf '| %d | %d clients | %s | %s | %s |\n' "$t" "$t" "$(echo "$r" | field rate)" "$(echo "$r" | field cpu_us_per_notification)" "$(echo "$r" | field peak_rss_mb)"
done
echo
echo "| load | offered notifications/s | achieved | latency p50 µs | latency p99 µs |"
echo "|---|---|---|---|---|"
for pct in 50 90; do
  offered=$(awk -v b="$base" -v p="$pct" 'BEGIN {printf "%d", b * p / 100}')
  r=$(load --count $((count / 2)) --window 10000 --rate "$offered")
  printf '| %d%% | %s | %s | %s | %s |\n' "$pct" "$offered" "$(echo "$r" | field rate)" \
    "$(echo "$r" | field latency_p50_us)" "$(echo "$r" | field latency_p99_us)"
done
