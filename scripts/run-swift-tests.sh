#!/usr/bin/env bash
# `swift test --skip-build [ARGS...]` as make test runs it (issue 36), through
# scripts/bounded-run.py:
#   - bounded: after SWIFT_TEST_BOUND seconds (default 2400) it prints the suites and tests that
#     started and did not finish, kills every process of the run, and fails (exit 124);
#   - an issue Swift Testing recorded outside any test («unknown» test: an expectation made on a
#     thread of no test's, which fails nothing by itself) fails the step;
#   - a process of the run still there 10 s after `swift test` ended (a server a test started,
#     a cluster node) is listed, killed, and fails the step.
# Only the run's own processes are looked at (the script is their child subreaper).
#   scripts/run-swift-tests.sh [--filter REGEX] [other swift test options]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bounded-run.py --bound "${SWIFT_TEST_BOUND:-2400}" --bound-name SWIFT_TEST_BOUND --label "swift test $*" --swift-testing \
  -- "${SWIFT:-swift}" test --skip-build "$@"
