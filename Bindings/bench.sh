#!/usr/bin/env bash
# Throughput of the bindings' batched paths against the mock APNs server: Python send_many
# (Bindings/python/bench.py) and Go SendBatch (BenchmarkSendBatch), with C (load.c) as the
# baseline, BENCH_COUNT notifications (default 200000) each, BENCH_RUNS runs (default 3),
# interleaved; prints each run, the medians and each binding's ratio to C (the ratio is what
# survives the noise of a shared machine). Workload as scripts/bench.sh: TLS 1.3, token auth, one device token, 200-byte
# payload, 1 connection, at most 20,000 outstanding. The mock runs on CPU 0 and the clients on
# CPU 1 where the machine has two cores. Use the release build (`make release`).
# Last line (machine-readable):
#   bindings-bench python_rate=<n> go_rate=<n> c_rate=<n>
# usage: Bindings/bench.sh BUILD_DIR   (holds libswiftpush.so and swiftpush-cli)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${1:?usage: Bindings/bench.sh BUILD_DIR}" && pwd)
count=${BENCH_COUNT:-200000}
runs=${BENCH_RUNS:-3}
pki=$root/.build-pki
bash scripts/make-test-pki.sh "$pki" >/dev/null
bash scripts/install-deps.sh go
out=$(mktemp -d)
mock_pid=""
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

server_cpu=""; client_cpu=""
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then server_cpu="taskset -c 0"; client_cpu="taskset -c 1"; fi

# The Go benchmark binary, built once (caches under .build-go/).
export GOCACHE=$root/.build-go/cache-$(basename "$build") GOPATH=$root/.build-go/path GOPROXY=off GOFLAGS= GO111MODULE=on
PKG_CONFIG_PATH=$(bash scripts/dev-pkgconfig.sh "$build")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
(cd Bindings/go && go test -c -o "$out/swiftpush.test" .)
gcc -std=c11 -O2 -Wall -Wextra -Werror -IInclude Bindings/c/examples/load.c -L"$build" -lswiftpush \
  -Wl,-rpath,"$build" -o "$out/load"

$server_cpu "$build/swiftpush-cli" mock --cert "$pki/server.pem" --key "$pki/server.key" --port 0 \
  --key-id TESTKEY001 --team-id TEAM123456 --auth-key "$pki/AuthKey_TESTKEY001.pub.pem" \
  --port-file "$out/port" > "$out/mock.log" 2>&1 &
mock_pid=$!
for _ in $(seq 1 200); do [ -s "$out/port" ] && break; sleep 0.05; done
port=$(cat "$out/port")

run_python() {
  SWIFTPUSH_LIBRARY=$build/libswiftpush.so PYTHONPATH=$root/Bindings/python \
    $client_cpu python3 Bindings/python/bench.py --port "$port" --ca "$pki/ca.pem" \
    --key "$pki/AuthKey_TESTKEY001.p8" --count "$count" > "$out/py.txt" 2>&1 || { cat "$out/py.txt" >&2; echo 0; return; }
  sed -nE 's/^python-bench .* rate=([0-9]+).*/\1/p' "$out/py.txt"
}
run_go() {
  SWIFTPUSH_MOCK_PORT=$port SWIFTPUSH_PKI=$pki $client_cpu "$out/swiftpush.test" -test.run '^$' \
    -test.bench SendBatch -test.benchtime "${count}x" > "$out/go.txt" 2>&1 || { cat "$out/go.txt" >&2; echo 0; return; }
  grep -oE '[0-9.]+ notifications/s' "$out/go.txt" | grep -oE '^[0-9]+'
}
run_c() {
  $client_cpu "$out/load" --host localhost --port "$port" --ca "$pki/ca.pem" --key "$pki/AuthKey_TESTKEY001.p8" \
    --count "$count" --window 20000 --quiet > "$out/c.txt" 2>&1 || { cat "$out/c.txt" >&2; echo 0; return; }
  sed -nE 's/^load-result .* rate=([0-9]+).*/\1/p' "$out/c.txt"
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

py_rates=""; go_rates=""; c_rates=""
for i in $(seq 1 "$runs"); do
  py=$(run_python); go=$(run_go); c=$(run_c)
  echo "run $i: python send_many ${py}/s, go SendBatch ${go}/s, C load ${c}/s ($count notifications each)"
  py_rates="$py_rates $py"; go_rates="$go_rates $go"; c_rates="$c_rates $c"
done
py_median=$(echo "$py_rates" | median)
go_median=$(echo "$go_rates" | median)
c_median=$(echo "$c_rates" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
echo "python send_many (one thread): median ${py_median} notifications/s of${py_rates} ($(ratio "$py_median" "$c_median") x C)"
echo "go SendBatch (one goroutine):  median ${go_median} notifications/s of${go_rates} ($(ratio "$go_median" "$c_median") x C)"
echo "C load.c (baseline):           median ${c_median} notifications/s of${c_rates}"
echo "bindings-bench python_rate=$py_median go_rate=$go_median c_rate=$c_median"
