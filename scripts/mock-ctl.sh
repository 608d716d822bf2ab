#!/usr/bin/env bash
# Helpers to start and stop mock APNs servers from shell scripts (sourced, not run).
#   mock_start NAME CLI PKI [extra mock options...]   starts one; sets MOCK_PORT and MOCK_PID
#   mock_stop_all                                      stops every mock this shell started
#   MOCK_RUNNER="taskset -c 0" mock_start ...          runs the server under a prefix command
#   bench_cpus                                         sets server_cpu/client_cpu (taskset prefixes)
#   mock_workspace [DIR...]                            makes $out (scratch, MOCK_LOG_DIR); at exit
#                                                      stops the mocks, removes $out and the DIRs
#   test_pki                                           the test PKI in .build-pki (made if missing) as $pki
#   build_c BUILD_DIR SRC OUT [gcc flags...]           compiles a C program against BUILD_DIR's library
#   build_load BUILD_DIR OUT                           compiles Bindings/c/examples/load.c to OUT
#   stream_drained REDIS_PORT SHARD [GROUP]            true when push:{SHARD}'s group has read and
#                                                      acknowledged everything and nothing is delayed
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
mock_workspace() {
  out=$(mktemp -d)
  export MOCK_LOG_DIR=$out
  MOCK_CLEANUP_DIRS=("$out" "$@")
  trap 'mock_stop_all; rm -rf "${MOCK_CLEANUP_DIRS[@]}"' EXIT
}
test_pki() {
  pki=$(pwd)/.build-pki
  scripts/make-test-pki.sh "$pki" >/dev/null
}
# The directory of this file's scripts, for callers that run from another checkout (bench.sh's baseline).
MOCK_CTL_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build_c() {
  local build=$1 src=$2 output=$3; shift 3
  # The program records the library's SONAME (libswiftpush.so.0): its link must exist in BUILD_DIR.
  bash "$MOCK_CTL_SCRIPTS/soname-link.sh" "$build"
  gcc -std=c11 -O2 -g -Wall -Wextra -Werror -IInclude "$src" -L"$build" -lswiftpush -Wl,-rpath,"$build" "$@" -o "$output"
}
build_load() { build_c "$1" Bindings/c/examples/load.c "$2"; }

# bench_workload BUILD PKI: what the benchmarks send, the same for the library and h2load: sets
# $token, $jwt and writes $out/load (load.c built against BUILD) and $out/payload.json (200 bytes).
bench_workload() {
  local build=$1 pki=$2
  build_load "$build" "$out/load"
  token=00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0
  python3 - "$out/payload.json" <<'PY'
import sys
head = '{"aps":{"alert":"Hello from swiftpush"},"pad":"'
open(sys.argv[1], "w").write(head + "x" * (200 - len(head) - 2) + '"}')
PY
  jwt=$("$build/swiftpush-cli" jwt --key "$pki/AuthKey_TESTKEY001.p8" --key-id TESTKEY001 --team-id TEAM123456)
}

# stream_drained REDIS_PORT SHARD: every entry of push:{SHARD} (and of its fast lane,
# push:{SHARD}:fast, when it exists) read and acknowledged by group
# senders, nothing waiting in delayed:{SHARD} (docs/worker.md, "Completion"): the group's pending
# count is 0, its last-delivered-id is at or past the stream's last entry, and the delayed set
# is empty, read in one script so that nothing moves between the three. XINFO GROUPS's `lag`
# is not used: Redis 7.0's entries-read counter behind it can stay stale after a restart. A
# worker acknowledges an entry only in the script that records its outcome, so this holds for
# either outcome format (format 2's outcomes stream has one entry per batch: its length says
# nothing).
stream_drained() {
  [ "$(redis-cli -p "$1" EVAL "$STREAM_DRAINED_LUA" 3 "push:{$2}" "delayed:{$2}" "push:{$2}:fast" "${3:-senders}" 2>/dev/null)" = 1 ]
}
STREAM_DRAINED_LUA='
local function id(s)
  local ms, seq = string.match(s, "^(%d+)-(%d+)$")
  return tonumber(ms), tonumber(seq)
end
-- One lane: its group has nothing pending and has delivered up to the last entry. A lane whose
-- stream does not exist (the fast lane where no worker or producer ever made it) holds nothing.
local function drained(key, must)
  local ok, groups = pcall(redis.call, "XINFO", "GROUPS", key)
  if not ok then return not must end
  for _, g in ipairs(groups) do
    local f = {}
    for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
    if f["name"] == ARGV[1] then
      if f["pending"] ~= 0 then return false end
      local last = redis.call("XREVRANGE", key, "+", "-", "COUNT", 1)[1]
      if not last then return true end
      local lm, ls = id(last[1])
      local dm, ds = id(f["last-delivered-id"])
      return dm > lm or (dm == lm and ds >= ls)
    end
  end
  return false
end
if redis.call("ZCARD", KEYS[2]) ~= 0 then return 0 end
if drained(KEYS[1], true) and drained(KEYS[3], false) then return 1 end
return 0'
