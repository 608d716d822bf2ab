#!/usr/bin/env bash
# Installs the Debian packages the build, the tests, the demo and the benchmark need, if any is
# missing. Idempotent and quiet when everything is there. Needs root (or sudo) only to install.
#   libssl-dev libnghttp2-dev pkg-config   build
#   nghttp2-client                         h2load (benchmark baseline), nghttp (mock tests)
#   openssl                                test keys and certificates
#   valgrind, strace                       memcheck, the "connects only where configured" check
#   python3-venv                           the wheel test's fresh venv
#   redis-server, libhiredis-dev           the queue-fed worker (build: hiredis; tests: a real Redis)
#   redis-tools                            redis-cli (the tests' checks, the cluster helper's --cluster create)
# Extras named on the command line (only what a test needs): go (golang-go), the shells the
# completion tests run: bash-completion, zsh, fish (about 8 MB of packages together), and
# chromium, the headless browser that loads the worker's status page (make test-status).
set -euo pipefail
need=()
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
pkg-config --exists libnghttp2 2>/dev/null || need+=(libnghttp2-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v openssl >/dev/null || need+=(openssl)
command -v gcc >/dev/null || need+=(gcc)
command -v g++ >/dev/null || need+=(g++)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
command -v taskset >/dev/null || need+=(util-linux)
command -v valgrind >/dev/null || need+=(valgrind)
command -v strace >/dev/null || need+=(strace)
pkg-config --exists hiredis 2>/dev/null || need+=(libhiredis-dev)
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
for extra in "$@"; do
  case "$extra" in
    go) command -v go >/dev/null || need+=(golang-go) ;;
    bash-completion) [ -f /usr/share/bash-completion/bash_completion ] || need+=(bash-completion) ;;
    zsh|fish|chromium) command -v "$extra" >/dev/null || need+=("$extra") ;;
    *) need+=("$extra") ;;
  esac
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}" >/dev/null
