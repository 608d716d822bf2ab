#!/usr/bin/env bash
# make test's stages (issue 34, item 6: its time), after `make test` has built the debug products
# and the tests in one build. Two lanes:
#   - the background lane (LANE, one entry after another): the builds only later stages need
#     (the release build, the ASan package, the fuzz harnesses), each into its own scratch path,
#     then the release files' suites (install, wheel, .deb, dist), while
#   - the stages (STAGES, in order) run in the foreground; a stage that needs a build of the
#     lane (NEEDS) waits for it first.
# test-swift runs before the lane starts: its chaos phases time each notification against a
# deadline, measured on a machine that is not also building.
# No stage builds again what is built (make -o): each stage's time is its own.
# Output: the foreground's as it comes; each background entry's when it is first waited for (or
# at the end). Every stage's wall time (a wait for the lane included) goes to out/test-times.txt
# with the lane's own times, printed as a table at the end, on failure too. Stops at the first
# failure (the lane is stopped with it); exit status 0 only when everything passed.
#   scripts/make-test.sh STARTED_EPOCH_SECONDS   (MAKE: the make to run the stages with)
set -uo pipefail
cd "$(dirname "$0")/.."
started_all=${1:-$(date +%s)}
times=out/test-times.txt
lane=out/test-lane
rm -rf "$lane" && mkdir -p "$lane"

STAGES=(test-docs test-swift
        test-header test-c test-cli test-example test-quickstart test-consumer test-redis test-status
        test-bindings memcheck
        test-alloc test-worker test-worker-cluster test-asan test-fuzz)
# The background lane, in order: the builds, then the release files' suites (CPU-light: they
# unpack and check what the release build made, and run it once against a mock).
LANE=(release build-asan build-fuzz test-install test-wheel test-deb test-dist)
# The background lane starts once this stage has passed.
LANE_AFTER=test-swift
declare -A NEEDS=([test-alloc]=release [test-worker]=release [test-worker-cluster]=release
                  [test-asan]=build-asan [test-fuzz]=build-fuzz)

# make_args ENTRY [release]: make's arguments for ENTRY: what is already built is not built again
# (-o NAME): the debug build and the PKI always, the release build once it is done, and for
# test-dist the wheel and the .deb that test-wheel and test-deb made and tested.
make_args() {
  local args=(--no-print-directory -o deps -o build -o pki)
  [ -z "${2:-}" ] || args+=(-o release -o release-lib)
  [ "$1" != test-dist ] || args+=(-o wheel -o deb)
  echo "${args[@]}" "$1"
}

lane_pid=""
# The background lane: each entry in turn, its output in $lane/NAME.log, its exit status in
# $lane/NAME.rc, its wall time in $lane/NAME.time; it stops at the first failure.
run_lane() {
  local b start rc released=""
  for b in "${LANE[@]}"; do
    start=$(date +%s)
    ${MAKE:-make} $(make_args "$b" $released) > "$lane/$b.log" 2>&1
    rc=$?
    echo $(( $(date +%s) - start )) > "$lane/$b.time"
    echo $rc > "$lane/$b.rc"
    [ $rc -eq 0 ] || return $rc
    [ "$b" != release ] || released=release
  done
}
shown=()
# show_lane NAME: prints a background entry's output once.
show_lane() {
  local b=$1 s
  for s in "${shown[@]}"; do [ "$s" = "$b" ] && return; done
  shown+=("$b")
  echo "--- $b (ran in the background: $(cat "$lane/$b.time" 2>/dev/null || echo '?') s)"
  cat "$lane/$b.log" 2>/dev/null
}
# wait_lane NAME: true once the background entry NAME has passed; false if it (or one before
# it) failed.
wait_lane() {
  local b=$1
  while [ ! -f "$lane/$b.rc" ]; do
    # The lane ended without reaching NAME: an earlier entry failed.
    if [ -n "$lane_pid" ] && ! kill -0 "$lane_pid" 2>/dev/null && [ ! -f "$lane/$b.rc" ]; then return 1; fi
    sleep 1
  done
  show_lane "$b"
  [ "$(cat "$lane/$b.rc")" = 0 ]
}
stop_lane() {
  [ -n "$lane_pid" ] && kill -- -"$lane_pid" 2>/dev/null
  wait 2>/dev/null
}
# lane_failed: prints the failed background entry's output and says which.
lane_failed() {
  local b
  for b in "${LANE[@]}"; do
    if [ -f "$lane/$b.rc" ] && [ "$(cat "$lane/$b.rc")" != 0 ]; then
      show_lane "$b"; echo "(background) $b: $(cat "$lane/$b.time") s (FAILED)" | tee -a "$times"
    fi
  done
}

status=0
released=""
for stage in "${STAGES[@]}"; do
  started=$(date +%s)
  need=${NEEDS[$stage]:-}
  if [ -n "$need" ] && ! wait_lane "$need"; then
    lane_failed
    echo "$stage: needs make $need, which failed (above)"
    status=1
  fi
  [ "$need" != release ] || released=release
  if [ $status -eq 0 ]; then
    ${MAKE:-make} $(make_args "$stage" $released) || status=$?
  fi
  echo "$stage: $(( $(date +%s) - started )) s$( [ $status -eq 0 ] || echo ' (FAILED)')" | tee -a "$times"
  [ $status -eq 0 ] || break
  if [ "$stage" = "$LANE_AFTER" ]; then
    # A process group of its own, so that a failure stops all of it.
    set -m; run_lane & lane_pid=$!; set +m
  fi
done
if [ $status -eq 0 ]; then
  # What the background lane has left: its last entries' outcome.
  started=$(date +%s)
  for b in "${LANE[@]}"; do
    if wait_lane "$b"; then echo "(background) $b: $(cat "$lane/$b.time") s" >> "$times"
    else lane_failed; status=1; break; fi
  done
  echo "waiting for the background lane at the end: $(( $(date +%s) - started )) s" | tee -a "$times"
fi
[ $status -eq 0 ] || stop_lane
echo "make test: $(( $(date +%s) - started_all )) s in all"
sed 's/^/  /' "$times"
exit $status
