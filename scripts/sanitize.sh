#!/usr/bin/env bash
# The client/mock end-to-end tests under a sanitizer (issue #8, item 2).
#   scripts/sanitize.sh address|thread [FILTER]
#     address  AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer (scratch .build-asan)
#     thread   ThreadSanitizer (scratch .build-tsan)
#   FILTER     swift test --filter regex (default:
#              PushClientCoreTests|PushTransportTests|APNsMockTests|SwiftPushKitTests, i.e. the
#              client's pure core, the client against the in-process mock, the mock itself, the
#              chaos test, the Swift API over the client)
# The suites are built from Tests/sanitizers/Package.swift, which holds these four and what they
# test and nothing else (the main package's test build would also compile SwiftNIO, Hummingbird,
# the worker and the command: issue 34, item 6). The mock tests that start the mock as a process
# run the debug build's command (SWIFTPUSH_TEST_CLI, default .build/debug/swiftpush-cli: make
# build); the mock's code is under the sanitizer in every test that runs it in process.
# Any sanitizer report fails the run. The chaos test runs with fewer notifications under a
# sanitizer (SWIFTPUSH_CHAOS_COUNT, default 20,000 for address, 10,000 for thread) and longer
# deadlines (SWIFTPUSH_CHAOS_DEADLINE_MS, SWIFTPUSH_CHAOS_WINDOW).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: sanitize.sh address|thread [FILTER]}
filter=${2:-'PushClientCoreTests|PushTransportTests|APNsMockTests|SwiftPushKitTests'}
supp=$(mktemp -d)
trap 'rm -rf "$supp"' EXIT

case $kind in
address)
  scratch=.build-asan
  # Swift 6.3 on Linux has no -sanitize=undefined for Swift code (swiftc: "unsupported
  # option"; Swift traps on overflow and bounds by itself): UBSan instruments the C targets
  # (CPushSystem: the epoll shims and nghttp2's pooled allocator, CSwiftPushABI) and the
  # inline C shims of the OpenSSL/nghttp2 module headers; its handlers come with the ASan
  # runtime.
  flags=(--sanitize=address -Xcc -fsanitize=undefined -Xcc -fno-sanitize-recover=undefined)
  export SWIFTPUSH_CHAOS_COUNT=${SWIFTPUSH_CHAOS_COUNT:-20000}
  export SWIFTPUSH_CHAOS_DEADLINE_MS=${SWIFTPUSH_CHAOS_DEADLINE_MS:-3000}
  # LeakSanitizer suppressions: only allocations made by the test harness, never by the
  # library or the mock (each one read from a report of this suite):
  #  - libXCTest.so: XCTest's main builds its (empty, Swift Testing runs the tests) suite
  #    objects and never frees them before exit.
  # (The tests start processes with TestProcessSupport's ChildProcess, not Foundation's
  # Process, whose run leaked a side table; and read files with open/read, not
  # String(contentsOfFile:), which leaked 4096 bytes a call.)
  cat > "$supp/lsan.supp" <<'SUPP'
leak:libXCTest.so
SUPP
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1}
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ;;
thread)
  scratch=.build-tsan
  flags=(--sanitize=thread)
  export SWIFTPUSH_CHAOS_COUNT=${SWIFTPUSH_CHAOS_COUNT:-10000}
  # Everything runs about ten times slower: a longer deadline and a smaller window, so that
  # answers are not mistaken for stalls.
  export SWIFTPUSH_CHAOS_DEADLINE_MS=${SWIFTPUSH_CHAOS_DEADLINE_MS:-5000}
  export SWIFTPUSH_CHAOS_WINDOW=${SWIFTPUSH_CHAOS_WINDOW:-1000}
  # No suppressions: every report counts. exitcode makes a run with reports fail even when
  # every test passed.
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:exitcode=66:second_deadlock_stack=1}
  ;;
*)
  echo "usage: sanitize.sh address|thread [FILTER]" >&2
  exit 2
  ;;
esac

export SWIFT_BACKTRACE=enable=no # the sanitizer prints the stack
cli=${SWIFTPUSH_TEST_CLI:-.build/debug/swiftpush-cli}
[ -x "$cli" ] || { echo "sanitize: $cli is missing (make build)" >&2; exit 2; }
export SWIFTPUSH_TEST_CLI=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")
# SwiftPM reads a relative scratch path from the package's directory.
mkdir -p "$scratch" && scratch=$(cd "$scratch" && pwd)
package=(--package-path Tests/sanitizers --scratch-path "$scratch")
start=$(date +%s)
# SANITIZE_SKIP_BUILD=1 (make test-asan, after make build-asan): built already, so no `swift
# build` (it would plan the graph and load every manifest again: 10-15 s).
[ -n "${SANITIZE_SKIP_BUILD:-}" ] || swift build --build-tests "${flags[@]}" "${package[@]}"
built=$(date +%s)
# SANITIZE_BUILD_ONLY=1 (make build-asan): the build alone, so that make test builds it while
# other suites run and its stage then only runs the tests.
if [ -n "${SANITIZE_BUILD_ONLY:-}" ]; then echo "sanitize $kind: built in $((built - start)) s"; exit 0; fi
log=$(mktemp)
trap 'rm -rf "$supp" "$log"' EXIT
status=0
# Bounded, and failed by issues outside any test or processes left behind (scripts/run-swift-tests.sh).
bash scripts/run-swift-tests.sh "${flags[@]}" "${package[@]}" --filter "$filter" 2>&1 | tee "$log" || status=$?
end=$(date +%s)
reports=$(grep -cE '^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread|Leak|UndefinedBehavior)Sanitizer)|runtime error:' "$log" || true)
echo "sanitize $kind: build $((built - start)) s, tests $((end - built)) s, sanitizer reports: $reports, exit $status"
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
  echo "FAILED: tests under the $kind sanitizer" >&2
  exit 1
fi
echo "ok: $filter under the $kind sanitizer"
