#!/usr/bin/env bash
# make test's stages (issue 34, item 6: its time), after `make test` has built the debug products
# and the tests in one build. Two lanes:
#   - the builds that only later stages need (BUILD_LANE: the release build, the ASan package,
#     the fuzz harnesses) run one after another in the background, each into its own scratch
#     path, while
#   - the stages (STAGES, in order) run in the foreground; a stage that needs one of those
#     builds (NEEDS) waits for it first.
# test-swift runs before the background lane starts: its chaos phases time each notification
# against a deadline, which is measured on a machine that is not building at the same time.
# No stage builds again what is built (make -o): each stage's time is its own.
# Output: the foreground's as it comes; each background build's when a stage first waits for it
# (or at the end). Every stage's wall time, a waited-for build's included, goes to
# out/test-times.txt and is printed as a table at the end, on failure too. Stops at the first
# failed stage (the background lane is stopped with it); exit status 0 only when all passed.
#   scripts/make-test.sh STARTED_EPOCH_SECONDS
set -uo pipefail
cd "$(dirname "$0")/.."
started_all=${1:-$(date +%s)}
make_=(${MAKE:-make} --no-print-directory)
times=out/test-times.txt
lane=out/test-lane
rm -rf "$lane" && mkdir -p "$lane"

STAGES=(test-docs test-swift
        test-header test-c test-cli test-example test-quickstart test-consumer test-redis test-status
        test-bindings memcheck
        test-alloc test-worker test-worker-cluster test-install test-wheel test-deb test-dist
        test-asan test-fuzz)
BUILD_LANE=(release build-asan build-fuzz)
# The background lane starts once this stage has passed.
LANE_AFTER=test-swift
declare -A NEEDS=([test-alloc]=release [test-worker]=release [test-worker-cluster]=release
                  [test-install]=release [test-wheel]=release [test-deb]=release [test-dist]=release
                  [test-asan]=build-asan [test-fuzz]=build-fuzz)
# What is already built when a stage runs: make must not build it again (-o NAME).
built=(-o deps -o build -o pki)

lane_pid=""
# The background lane: each build in turn, its output in $lane/NAME.log, its exit status in
# $lane/NAME.rc, its wall time in $lane/NAME.time; it stops at the first failure.
run_lane() {
  local b start rc
  for b in "${BUILD_LANE[@]}"; do
    start=$(date +%s)
    "${make_[@]}" "${built[@]}" "$b" > "$lane/$b.log" 2>&1
    rc=$?
    echo $(( $(date +%s) - start )) > "$lane/$b.time"
    echo $rc > "$lane/$b.rc"
    [ $rc -eq 0 ] || return $rc
  done
}
shown=()
# show_build NAME: prints a background build's output once.
show_build() {
  local b=$1 s
  for s in "${shown[@]}"; do [ "$s" = "$b" ] && return; done
  shown+=("$b")
  echo "--- $b (built in the background in $(cat "$lane/$b.time" 2>/dev/null || echo '?') s)"
  cat "$lane/$b.log" 2>/dev/null
}
# wait_build NAME: true once the background build NAME has passed; false if it (or one before
# it) failed.
wait_build() {
  local b=$1
  while [ ! -f "$lane/$b.rc" ]; do
    if [ -n "$lane_pid" ] && ! kill -0 "$lane_pid" 2>/dev/null; then
      # The lane ended without reaching NAME: an earlier build failed.
      [ -f "$lane/$b.rc" ] || return 1
    fi
    sleep 1
  done
  show_build "$b"
  [ "$(cat "$lane/$b.rc")" = 0 ]
}
stop_lane() {
  [ -n "$lane_pid" ] && kill -- -"$lane_pid" 2>/dev/null
  wait 2>/dev/null
}

status=0
for stage in "${STAGES[@]}"; do
  started=$(date +%s)
  need=${NEEDS[$stage]:-}
  if [ -n "$need" ]; then
    if ! wait_build "$need"; then
      for b in "${BUILD_LANE[@]}"; do [ -f "$lane/$b.rc" ] && show_build "$b"; done
      echo "$stage: its build, make $need, failed (above)"
      status=1
    fi
    [ "$need" != release ] || [[ " ${built[*]} " == *" release "* ]] || built+=(-o release -o release-lib)
  fi
  extra=()
  # make dist packs the wheel and the .deb that test-wheel and test-deb made and tested.
  [ "$stage" = test-dist ] && extra=(-o wheel -o deb)
  if [ $status -eq 0 ]; then
    "${make_[@]}" "${built[@]}" "${extra[@]}" "$stage" || status=$?
  fi
  echo "$stage: $(( $(date +%s) - started )) s$( [ $status -eq 0 ] || echo ' (FAILED)')" | tee -a "$times"
  [ $status -eq 0 ] || break
  if [ "$stage" = "$LANE_AFTER" ]; then
    # A process group of its own, so that a failure stops all of it.
    set -m; run_lane & lane_pid=$!; set +m
  fi
done
if [ $status -ne 0 ]; then
  stop_lane
else
  wait
  for b in "${BUILD_LANE[@]}"; do show_build "$b"; echo "(background) $b: $(cat "$lane/$b.time") s" >> "$times"; done
fi
echo "make test: $(( $(date +%s) - started_all )) s in all"
sed 's/^/  /' "$times"
exit $status
