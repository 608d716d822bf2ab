#!/usr/bin/env bash
# make test's stages (issue 34, item 6: its time). First the debug products and the tests, in one
# build (make build-tests); then two lanes:
#   - the background lane (LANE, one entry after another): the builds only later stages need
#     (the release build, the ASan package, the fuzz harnesses), each into its own scratch path,
#     while
#   - the stages (STAGES, in order) run in the foreground; a stage that needs a build of the
#     lane (NEEDS) waits for it first.
# The release files' suites (TAIL: install, wheel, .deb, dist) go to whichever lane is free
# first: the background lane after its builds, or the foreground while it would otherwise wait
# for a build, and after its last stage. Each is claimed once (mkdir is atomic), so the two
# lanes end together instead of one waiting for the other (in CI the background lane alone
# ended up to 55 s after the foreground).
# The lane is the longer of the two (the foreground waited 37-65 s for the release build at
# test-alloc), so it starts as soon as the debug build has passed, at the lowest priority (nice
# 19) while test-swift runs: test-swift's chaos phases time each notification against a deadline
# and its tests run in parallel, so it gets the cores first. Once test-swift has passed the lane
# goes back to priority 0 (renice: as root, as in CI; elsewhere it stays at 19). At nice 19 the
# lane still slows test-swift (77-81 s alone, 107 s beside it in one run), but the foreground has
# that much to spare, the lane has not.
# No stage builds again what is built (make -o): each stage's time is its own.
# Output: the foreground's as it comes; each background entry's when it is first waited for (or
# at the end). Every stage's wall time (a wait for the lane included) and the CPU time of its
# processes go to out/test-times.txt with the lane's own, printed as a table at the end, on
# failure too, with the run's CPU time against what its wall time gives on this machine's cores:
# the builds and suites share 2 cores, so the CPU total, not the order, bounds the wall time.
# Stops at the first failure (the lane is stopped with it); exit status 0 only when everything
# passed.
#   scripts/make-test.sh STARTED_EPOCH_SECONDS   (MAKE: the make to run the stages with)
set -uo pipefail
cd "$(dirname "$0")/.."
started_all=${1:-$(date +%s)}
times=out/test-times.txt
lane=out/test-lane
rm -rf "$lane" && mkdir -p "$lane"
: > "$times"

# children_cpu FILE: the children's CPU time (user + system, whole seconds) in FILE, which holds
# what bash's `times` printed (its second line: children's user and system, as 1m2.345s).
children_cpu() {
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
                 printf "%d\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] + 0.5 }' "$1"
}
# timed NAME COMMAND...: runs COMMAND; its CPU time (user + system of it and every process under
# it that ended, as bash's `times` counts them in a shell of its own) goes to $lane/NAME.cpu, in
# whole seconds. Processes that detach (a daemonized redis-server) are not counted.
timed() {
  local f=$lane/$1.cpu; shift
  bash -c 'f=$1; shift; "$@"; rc=$?; times > "$f.times"; exit $rc' timed "$f" "$@"
  local rc=$?
  children_cpu "$f.times" > "$f"
  return $rc
}

STAGES=(test-docs test-swift
        test-header test-c test-cli test-example test-quickstart test-consumer test-redis test-status
        test-bindings memcheck
        test-alloc test-worker test-worker-cluster test-asan test-fuzz)
# The background lane, in order: the builds.
LANE=(release build-asan build-fuzz)
# The release files' suites (CPU-light: they unpack and check what the release build made, and
# run it once against a mock), in order; each runs once its AFTER entries have passed.
TAIL=(test-install test-wheel test-deb test-dist)
declare -A AFTER=([test-install]=release [test-wheel]=release [test-deb]=release
                  [test-dist]="test-wheel test-deb")
# The background lane runs at nice 19 until this stage has passed.
NICE_UNTIL=test-swift
declare -A NEEDS=([test-alloc]=release [test-worker]=release [test-worker-cluster]=release
                  [test-asan]=build-asan [test-fuzz]=build-fuzz)

# make_args ENTRY [release]: make's arguments for ENTRY. The .deb packed with xz -1 (Makefile,
# DEB_XZ_LEVEL); test-bindings runs the Go suite only, since test-wheel runs the Python one
# against the installed wheel. What is already built is not built again
# (-o NAME): the debug build (examples included) and the PKI always, the ASan package and the
# fuzz harnesses (the stages that run them wait for the lane's build first), the release build
# once it is done, and for test-dist the wheel and the .deb that test-wheel and test-deb made and
# tested. Each `swift build` avoided saves 10-15 s (SwiftPM reloads every manifest when the
# environment differs from the last build's, and each make level and script changes it).
make_args() {
  local args=(--no-print-directory -o deps -o build -o build-examples -o pki DEB_XZ_LEVEL=1 BINDINGS=go) b
  for b in build-asan build-fuzz; do [ "$1" = "$b" ] || args+=(-o "$b"); done
  [ -z "${2:-}" ] || args+=(-o release -o release-lib)
  [ "$1" != test-dist ] || args+=(-o wheel -o deb)
  echo "${args[@]}" "$1"
}

lane_pid=""
# run_entry NAME [release] WHERE: runs a lane or tail entry, its output in $lane/NAME.log, its
# exit status in $lane/NAME.rc, its wall time in $lane/NAME.time, which lane ran it in
# $lane/NAME.where.
run_entry() {
  local b=$1 released=$2 start rc
  echo "$3" > "$lane/$b.where"
  start=$(date +%s)
  timed "$b" ${MAKE:-make} $(make_args "$b" $released) > "$lane/$b.log" 2>&1
  rc=$?
  echo "$(( $(date +%s) - start )) s, $(cat "$lane/$b.cpu") CPU-s" > "$lane/$b.time"
  echo $rc > "$lane/$b.rc"
  return $rc
}
# passed NAME...: true when every entry named has passed.
passed() {
  local b
  for b in "$@"; do [ "$(cat "$lane/$b.rc" 2>/dev/null)" = 0 ] || return 1; done
}
# ready NAME: true when the tail entry NAME can start now.
ready() { passed ${AFTER[$1]}; }
# claim NAME: true for the one lane that takes the tail entry NAME.
claim() { mkdir "$lane/$1.claim" 2>/dev/null; }
# The background lane: each build in turn, then each tail entry the foreground has not taken;
# it stops at the first failure.
run_lane() {
  local b released=""
  renice -n 19 -p "$BASHPID" > /dev/null  # the builds it starts inherit it
  for b in "${LANE[@]}"; do
    run_entry "$b" "$released" background || return
    [ "$b" != release ] || released=release
  done
  for b in "${TAIL[@]}"; do
    claim "$b" || continue
    # Its AFTER entries may still run in the foreground; one that failed stops this lane.
    while ! ready "$b"; do
      for a in ${AFTER[$b]}; do [ ! -f "$lane/$a.rc" ] || passed "$a" || return 1; done
      sleep 1
    done
    run_entry "$b" release background || return
  done
}
# take_tail [ONE]: the foreground runs the tail entries that are ready and not taken (only the
# first such with ONE); false if one of them failed.
take_tail() {
  local b
  for b in "${TAIL[@]}"; do
    if ready "$b" && claim "$b"; then
      run_entry "$b" release foreground; show_lane "$b"
      passed "$b" || return 1
      echo "(foreground) $b: $(cat "$lane/$b.time")" >> "$times"
      [ -z "${1:-}" ] || return 0
    fi
  done
}
shown=()
# show_lane NAME: prints a background entry's output once.
show_lane() {
  local b=$1 s
  for s in "${shown[@]}"; do [ "$s" = "$b" ] && return; done
  shown+=("$b")
  echo "--- $b (ran in the $(cat "$lane/$b.where" 2>/dev/null || echo background): $(cat "$lane/$b.time" 2>/dev/null || echo '?'))"
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
  for b in "${LANE[@]}" "${TAIL[@]}"; do
    if [ -f "$lane/$b.rc" ] && [ "$(cat "$lane/$b.rc")" != 0 ]; then
      show_lane "$b"; echo "($(cat "$lane/$b.where")) $b: $(cat "$lane/$b.time") (FAILED)" | tee -a "$times"
    fi
  done
}

status=0
# The debug build; its wall time counts from make test's start (the packages and the PKI).
timed build-tests ${MAKE:-make} --no-print-directory -o deps build-tests || status=$?
echo "build: $(( $(date +%s) - started_all )) s, $(cat "$lane/build-tests.cpu") CPU-s (debug products and tests, one build)$( [ $status -eq 0 ] || echo ' (FAILED)')" | tee -a "$times"
[ $status -eq 0 ] || STAGES=()
# The background lane, in a process group of its own, so that a failure stops all of it.
if [ $status -eq 0 ]; then set -m; run_lane & lane_pid=$!; set +m; fi
released=""
for stage in "${STAGES[@]}"; do
  started=$(date +%s)
  need=${NEEDS[$stage]:-}
  # While the build this stage needs is still running, the foreground takes a tail entry.
  while [ -n "$need" ] && [ $status -eq 0 ] && [ ! -f "$lane/$need.rc" ] && ready "${TAIL[0]}"; do
    before=$(ls "$lane" | grep -c '\.claim$')
    take_tail one || { lane_failed; status=1; }
    [ "$(ls "$lane" | grep -c '\.claim$')" -gt "$before" ] || break
  done
  if [ $status -eq 0 ] && [ -n "$need" ] && ! wait_lane "$need"; then
    lane_failed
    echo "$stage: needs make $need, which failed (above)"
    status=1
  fi
  [ "$need" != release ] || released=release
  if [ $status -eq 0 ]; then
    timed "$stage" ${MAKE:-make} $(make_args "$stage" $released) || status=$?
  fi
  echo "$stage: $(( $(date +%s) - started )) s, $(cat "$lane/$stage.cpu" 2>/dev/null || echo 0) CPU-s$( [ $status -eq 0 ] || echo ' (FAILED)')" | tee -a "$times"
  [ $status -eq 0 ] || break
  # Every process of the lane's group (its shell, make, the compilers) back to priority 0; only
  # root may lower a nice value, so elsewhere the lane stays at 19.
  [ "$stage" != "$NICE_UNTIL" ] || renice -n 0 -g "$lane_pid" > /dev/null 2>&1 || true
done
if [ $status -eq 0 ]; then
  # The tail entries nobody has taken yet, here, as they become ready; then what the background
  # lane has left: its last entries' outcome.
  started=$(date +%s)
  while [ $status -eq 0 ]; do
    left=""
    for b in "${TAIL[@]}"; do [ -d "$lane/$b.claim" ] || left=1; done
    [ -n "$left" ] || break
    take_tail || { lane_failed; status=1; break; }
    # An entry waiting for one the background lane runs: wait, unless the lane has failed.
    for b in "${LANE[@]}" "${TAIL[@]}"; do
      if [ -f "$lane/$b.rc" ] && ! passed "$b"; then lane_failed; status=1; fi
    done
    if [ -n "$lane_pid" ] && ! kill -0 "$lane_pid" 2>/dev/null; then
      for b in "${TAIL[@]}"; do ready "$b" || [ -d "$lane/$b.claim" ] || { echo "$b: what it needs did not pass"; status=1; }; done
    fi
    sleep 1
  done
  for b in "${LANE[@]}" "${TAIL[@]}"; do
    [ $status -eq 0 ] || break
    [ "$(cat "$lane/$b.where" 2>/dev/null)" != foreground ] || continue
    if wait_lane "$b"; then echo "(background) $b: $(cat "$lane/$b.time")" >> "$times"
    else lane_failed; status=1; break; fi
  done
  echo "waiting for the background lane at the end: $(( $(date +%s) - started )) s" | tee -a "$times"
fi
wall=$(( $(date +%s) - started_all ))
[ $status -eq 0 ] || stop_lane
wait 2>/dev/null
# Every child has ended (the lane included): their CPU time, against what the wall time gives.
cores=$(nproc)
times > "$lane/.times"  # in this shell: a $(...) would count from zero
cpu=$(children_cpu "$lane/.times")
echo "make test: $wall s in all, $cpu CPU-s of the $(( wall * cores )) that $cores cores give in that time"
sed 's/^/  /' "$times"
exit $status
