#!/usr/bin/env bash
# Helpers to start and stop mock APNs servers from shell scripts (sourced, not run).
#   mock_start NAME CLI PKI [extra mock options...]   starts one; sets MOCK_PORT and MOCK_PID
#   mock_stop_all                                      stops every mock this shell started
#   MOCK_RUNNER="taskset -c 0" mock_start ...          runs the server under a prefix command
#   bench_cpus                                         sets server_cpu/client_cpu (taskset prefixes)
#   build_load BUILD_DIR OUT                           compiles Bindings/c/examples/load.c to OUT
MOCK_PIDS=()
mock_start() {
  local name=$1 cli=$2 pki=$3; shift 3
  local portfile
  portfile=$(mktemp)
  rm -f "$portfile"
  ${MOCK_RUNNER:-} "$cli" mock --cert "$pki/${MOCK_CERT:-server}.pem" --key "$pki/${MOCK_CERT:-server}.key" --port 0 \
    --key-id TESTKEY001 --team-id TEAM123456 --auth-key "$pki/AuthKey_TESTKEY001.pub.pem" \
    --port-file "$portfile" "$@" > "${MOCK_LOG_DIR:-/tmp}/mock-$name.log" 2>&1 &
  MOCK_PID=$!
  MOCK_PIDS+=("$MOCK_PID")
  for _ in $(seq 1 200); do
    [ -s "$portfile" ] && break
    kill -0 "$MOCK_PID" 2>/dev/null || { cat "${MOCK_LOG_DIR:-/tmp}/mock-$name.log" >&2; echo "mock $name did not start" >&2; return 1; }
    sleep 0.05
  done
  MOCK_PORT=$(cat "$portfile")
  rm -f "$portfile"
  [ -n "$MOCK_PORT" ] || { echo "mock $name gave no port" >&2; return 1; }
}
mock_stop_all() {
  for pid in "${MOCK_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${MOCK_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  MOCK_PIDS=()
}

bench_cpus() {
  server_cpu=""; client_cpu=""
  if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then server_cpu="taskset -c 0"; client_cpu="taskset -c 1"; fi
}
build_load() {
  gcc -std=c11 -O2 -Wall -Wextra -Werror -IInclude Bindings/c/examples/load.c -L"$1" -lswiftpush \
    -Wl,-rpath,"$1" -o "$2"
}
