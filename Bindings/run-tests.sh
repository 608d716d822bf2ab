#!/usr/bin/env bash
# Tests of the Python and Go bindings against BUILD_DIR's libswiftpush.so and swiftpush-cli
# (the mock APNs server): pytest, then go vet + go test. Prints each one's summary; exits non-zero
# if either fails. Installs what is missing (pytest with pip, golang-go with apt through
# scripts/install-deps.sh; redis-py with pip for swiftpush.queue); Go's caches stay under .build-go/ in the repository.
# BINDINGS (default "python go"): the suites to run. make test runs the Go one here and the Python
# one once, in test-wheel, against the installed wheel (the library users get from pip), not
# twice (44 s each).
# usage: Bindings/run-tests.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=$(cd "${1:?usage: Bindings/run-tests.sh BUILD_DIR (holds libswiftpush.so and swiftpush-cli)}" && pwd)
for f in libswiftpush.so swiftpush-cli; do
  [ -e "$build/$f" ] || { echo "run-tests.sh: $build/$f is missing" >&2; exit 2; }
done
pki=$root/.build-pki
bash scripts/make-test-pki.sh "$pki" >/dev/null
bash scripts/install-deps.sh go
python3 -c 'import pytest' 2>/dev/null || python3 -m pip install -q pytest
# The optional Prometheus collector is tested too.
python3 -c 'import prometheus_client' 2>/dev/null || python3 -m pip install -q prometheus_client
# swiftpush.queue's optional extra (redis-py), and redis-server for its test.
python3 -c 'import redis' 2>/dev/null || python3 -m pip install -q redis

export SWIFTPUSH_LIBRARY=$build/libswiftpush.so SWIFTPUSH_CLI=$build/swiftpush-cli SWIFTPUSH_PKI=$pki
status=0

bindings=" ${BINDINGS:-python go} "
for b in $bindings; do
  case $b in python|go) ;; *) echo "run-tests.sh: BINDINGS names $b: not python or go" >&2; exit 2 ;; esac
done
if [[ $bindings == *" python "* ]]; then
  echo "== Python binding: pytest (Bindings/python/tests)"
  # Runs from the source tree (no install); `pip install Bindings/python` gives the same package.
  PYTHONPATH=$root/Bindings/python${PYTHONPATH:+:$PYTHONPATH} \
    python3 -m pytest -q -p no:cacheprovider -W error::pytest.PytestUnraisableExceptionWarning Bindings/python/tests || status=1
fi

if [[ $bindings == *" go "* ]]; then
  echo "== Go binding: go vet + go test (Bindings/go)"
  # One build cache per BUILD_DIR: Go does not key cgo packages on pkg-config output, so a shared
  # cache would link against whichever swiftpush.pc built the package first.
  export GOCACHE=$root/.build-go/cache-$(basename "$build") GOPATH=$root/.build-go/path GOPROXY=off GOFLAGS= GO111MODULE=on
  # The package links through `#cgo pkg-config: swiftpush`; here that finds a development .pc naming
  # this checkout's Include/ and $build (with an rpath), instead of an installed copy.
  PKG_CONFIG_PATH=$(bash scripts/dev-pkgconfig.sh "$build")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export PKG_CONFIG_PATH
  unset CGO_LDFLAGS CGO_CFLAGS
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  if (cd Bindings/go && go vet ./... && go test -count=1 -v ./...) > "$log" 2>&1; then
    go_ok=1
  else
    go_ok=0
    status=1
  fi
  passed=$(grep -c -- '^--- PASS' "$log" || true)
  failed=$(grep -c -- '^--- FAIL' "$log" || true)
  skipped=$(grep -c -- '^--- SKIP' "$log" || true)
  if [ "$go_ok" = 0 ]; then
    grep -v -E '^(=== (RUN|PAUSE|CONT)|    --- PASS)' "$log" | tail -60
  fi
  grep -E '^(ok|FAIL|---.*FAIL)\s' "$log" || true
  echo "go: $passed passed, $failed failed, $skipped skipped (top-level tests)"
fi
exit $status
