#!/usr/bin/env bash
# Builds the libFuzzer harnesses (FuzzTesting/, a package of their own that depends on the main
# one by path) with AddressSanitizer and coverage, runs each
# for SECONDS (default 20: the CI-sized run; a long run is the same command with a bigger
# number) over its committed seed corpus (Tests/fuzz/corpus/<name>, which also holds the inputs
# of past crashes, replayed first), and fails if any harness crashes, breaks one of its
# properties, leaks, or times out.
#   Tests/fuzz/run.sh [SECONDS] [HARNESS...]      e.g. Tests/fuzz/run.sh 600 payload cabi
# New coverage is kept in $FUZZ_SCRATCH/corpus (not in the repository); crash inputs go to
# $FUZZ_SCRATCH/findings, each with the command that replays it. FUZZ_SCRATCH defaults to
# .build-fuzz (its own SwiftPM scratch path: the fuzz flags never touch .build).
set -uo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-20}
shift || true
all=(json payload response apns keys cabi)
if [ $# -eq 0 ]; then harnesses=("${all[@]}"); else harnesses=("$@"); fi
scratch=${FUZZ_SCRATCH:-.build-fuzz}
declare -A product=([json]=FuzzJSON [payload]=FuzzPayload [response]=FuzzResponse [apns]=FuzzApnsFile [keys]=FuzzKeys [cabi]=FuzzCABI)

# libFuzzer's runtime without its main(): SwiftPM gives every executable a main of its own, so
# the harnesses call LLVMFuzzerRunDriver themselves (FuzzTesting/Sources/FuzzSupport/FuzzMain.swift).
find_runtime() {
  local arch swiftc
  arch=$(uname -m)
  swiftc=$(readlink -f "$(command -v swiftc)")
  ls "$(dirname "$swiftc")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-"$arch".a \
     /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-"$arch".a 2>/dev/null | head -1
}
runtime=$(find_runtime)
if [ -z "$runtime" ]; then
  echo "fuzz: libFuzzer's runtime is not in the Swift toolchain; installing libclang-rt-14-dev"
  if [ "$(id -u)" = 0 ]; then apt-get install -y -q libclang-rt-14-dev >/dev/null; else sudo apt-get install -y -q libclang-rt-14-dev >/dev/null; fi
  runtime=$(find_runtime)
  [ -n "$runtime" ] || { echo "fuzz: no libclang_rt.fuzzer_no_main found"; exit 2; }
fi

# Coverage and ASan through -Xswiftc: SwiftPM's own --sanitize=fuzzer instruments only the
# first build of a scratch path (incremental rebuilds lose the coverage flags).
flags=(-Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
       -Xswiftc -DFUZZING -Xlinker "$runtime" -Xlinker -lstdc++)
start=$(date +%s)
mkdir -p "$scratch/findings" "$scratch/tmp"
scratch=$(cd "$scratch" && pwd) # SwiftPM reads a relative scratch path from the package's directory
tmp=$scratch/tmp # the harnesses' temporary files (FuzzKeys, FuzzCABI write some)
package=(--package-path FuzzTesting --scratch-path "$scratch")
for h in "${harnesses[@]}"; do
  [ -n "${product[$h]:-}" ] || { echo "fuzz: unknown harness $h (one of: ${all[*]})"; exit 2; }
done
# All of them (make test): one `swift build` of the package, not one per harness, each of which
# plans and checks the whole build graph again (issue 34, item 6).
if [ ${#harnesses[@]} -eq ${#all[@]} ]; then builds=(""); else builds=("${harnesses[@]}"); fi
# FUZZ_SKIP_BUILD=1 (make test-fuzz, after make build-fuzz): built already, so no `swift build` at
# all (each one plans the graph and may load every manifest again: 10-15 s).
[ -z "${FUZZ_SKIP_BUILD:-}" ] || builds=()
for h in ${builds[@]+"${builds[@]}"}; do
  what=(); [ -z "$h" ] || what=(--product "${product[$h]}")
  if ! swift build "${package[@]}" "${what[@]}" "${flags[@]}" >"$scratch/build.log" 2>&1; then
    grep -E "error:" "$scratch/build.log" | head -20
    echo "fuzz: building ${h:+${product[$h]}}${h:-the harnesses} failed (full log: $scratch/build.log)"
    exit 2
  fi
done
built=$(date +%s)
# FUZZ_BUILD_ONLY=1 (make build-fuzz): the harnesses built and nothing run, so that make test
# builds them while other suites run.
if [ -n "${FUZZ_BUILD_ONLY:-}" ]; then echo "fuzz: built ${#harnesses[@]} harnesses in $((built - start)) s"; exit 0; fi
echo "fuzz: built ${#harnesses[@]} harnesses in $((built - start)) s; running each for $seconds s, ${FUZZ_JOBS:-$(nproc)} at a time"

bin=$scratch/debug # SwiftPM's link to <triple>/debug (what --show-bin-path prints, without loading the package)
[ -x "$bin/${product[${harnesses[0]}]}" ] || { echo "fuzz: $bin/${product[${harnesses[0]}]} is missing (make build-fuzz)"; exit 2; }
# run_harness H: one harness for SECONDS over its corpora; its exit status in findings/H.rc.
run_harness() {
  local h=$1 work="$scratch/corpus/$1" log="$scratch/findings/$1.log" dict=()
  mkdir -p "$work"
  [ "$h" = keys ] || [ "$h" = cabi ] || dict=(-dict=Tests/fuzz/json.dict)
  TMPDIR="$tmp" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
    "$bin/${product[$h]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      "${dict[@]}" -artifact_prefix="$scratch/findings/$h-" "$work" "Tests/fuzz/corpus/$h" >"$log" 2>&1
  echo $? > "$scratch/findings/$h.rc"
}
# FUZZ_JOBS harnesses at a time (default: one per core; a harness is one process), so that the
# CI-sized run takes SECONDS per core's share of the harnesses, not SECONDS per harness.
for h in "${harnesses[@]}"; do
  rm -f "$scratch/findings/$h.rc"
  while [ "$(jobs -rp | wc -l)" -ge "${FUZZ_JOBS:-$(nproc)}" ]; do wait -n || true; done
  run_harness "$h" &
done
wait
passed=0 failed=0
for h in "${harnesses[@]}"; do
  log="$scratch/findings/$h.log"
  rc=$(cat "$scratch/findings/$h.rc" 2>/dev/null || echo 2)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  counters=$(sed -n 's/^INFO: Loaded 1 modules *(\([0-9]*\) inline 8-bit counters.*/\1/p' "$log" | head -1)
  if [ "$rc" -eq 0 ] && [ "${counters:-0}" -lt 1000 ]; then
    echo "fuzz: $h: only ${counters:-0} coverage counters: the harness was built without instrumentation"
    rc=1
  fi
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    printf 'fuzz: %-8s ok      %10s executions\n' "$h" "${runs:-?}"
  else
    failed=$((failed + 1))
    printf 'fuzz: %-8s FAILED  %10s executions (exit %s; log %s)\n' "$h" "${runs:-?}" "$rc" "$log"
    grep -E "Fatal error|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|SUMMARY" "$log" | head -5 | sed 's/^/    /'
    for artifact in $(sed -n "s/.*Test unit written to \(.*\)$/\1/p" "$log"); do
      echo "    input: $artifact   replay: SWIFT_BACKTRACE=enable=no $bin/${product[$h]} $artifact"
    done
  fi
done
echo "fuzz: $(( $(date +%s) - start )) s in all"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
