#!/usr/bin/env bash
# A Swift package that depends on this one for SwiftPushKit only, as a user's would (issue 30,
# item 3), from scratch:
#   - by version, resolved, built and run: this checkout committed to a git repository of its own and tagged VERSION,
#     required through a file:// URL with `from: "VERSION"` (SwiftPM refuses unsafe flags in a
#     package used by version: none may be on SwiftPushKit's way);
#   - by path, without `name:` (the path's last component, "swiftpush", is the identity),
#     resolved only: the same sources build the same way, and a second build from scratch
#     cost make test about 4 minutes on 2 cores for no check the first one does not make.
# Both with `traits: []` (the Tools trait off): each must resolve and check out exactly the
# packages SwiftPushKit uses (swift-log, swift-metrics, swift-service-lifecycle and theirs), print
# no warning while resolving or building, and the built program (the README's first Swift block, which
# is Examples/NotifyService/Sources/SendOne/main.swift) must send one notification to the mock.
# SwiftPM's cache, configuration and security (fingerprint) directories are the test's own: no
# state from HOME is used or left behind.
# usage: Tests/consumer/run.sh BUILD_DIR VERSION   (BUILD_DIR holds swiftpush-cli, for the mock)
# Prints one line per check and "consumer: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR VERSION}" && pwd)
version=${2:?usage: run.sh BUILD_DIR VERSION}
source scripts/mock-ctl.sh
test_pki
mock_workspace

pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; [ -f "$out/detail" ] && sed 's/^/    /' "$out/detail"; fail=$((fail + 1)); }

# The checkout as a user would get it: the files git knows (committed or not, not ignored), so
# nothing built here (.build*, dist/) comes along; every file when this is not a git checkout.
repo=$out/swiftpush
python3 - "$root" "$repo" <<'PY'
import os, shutil, subprocess, sys
root, dest = sys.argv[1:3]
try:
    names = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.decode().split("\0")
except (OSError, subprocess.CalledProcessError):  # a source archive: all but build outputs
    names = []
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".build", ".git", ".swiftpm")) and x not in ("out", "dist")]
        names += [os.path.relpath(os.path.join(d, f), root) for f in files]
for name in filter(None, names):
    src = os.path.join(root, name)
    if os.path.isfile(src):  # a file deleted but not yet committed is listed too
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, name))
PY
# No user identity, hooks or signing from this machine's git configuration.
git_here() { GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C "$repo" -c user.name=swiftpush-test \
  -c user.email=test@localhost -c commit.gpgsign=false -c tag.gpgsign=false -c init.defaultBranch=main "$@"; }
git_here init -q
git_here add -A
git_here commit -q -m "swiftpush $version"
git_here tag "$version"

expected="swift-async-algorithms swift-collections swift-log swift-metrics swift-service-lifecycle"
swiftpm=(--cache-path "$out/swiftpm/cache" --config-path "$out/swiftpm/config" --security-path "$out/swiftpm/security")
mkdir -p "$out/run" && cp "$pki/AuthKey_TESTKEY001.p8" "$out/run/"
mock_start consumer "$build/swiftpush-cli" "$pki"

# consumer NAME DEPENDENCY EXPECTED_PINS build|resolve: makes the package, resolves it (and
# builds and runs it), checks.
consumer() {
  local name=$1 dependency=$2 pins=$3 mode=$4 dir=$out/$1
  mkdir -p "$dir/Sources/Consumer"
  cp Examples/NotifyService/Sources/SendOne/main.swift "$dir/Sources/Consumer/main.swift"
  cat > "$dir/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [$dependency],
    targets: [
        .executableTarget(name: "Consumer", dependencies: [.product(name: "SwiftPushKit", package: "swiftpush")]),
    ]
)
SWIFT
  local started log=$out/$name.log
  started=$(date +%s)
  local verb=build
  [ "$mode" = resolve ] && verb="package resolve"
  if ! swift $verb --package-path "$dir" --scratch-path "$dir/.build" "${swiftpm[@]}" > "$log" 2>&1; then
    tail -40 "$log" > "$out/detail"; bad "$name: the consumer's swift $verb succeeds"; return
  fi
  echo "$name: swift $verb in $(( $(date +%s) - started )) s"

  local check="$name: resolves exactly $pins"
  python3 - "$dir/Package.resolved" "$dir/.build/checkouts" "$pins" > "$out/detail" <<'PY' && ok "$check" || bad "$check"
import json, os, sys
resolved, checkouts, want = sys.argv[1], sys.argv[2], sorted(sys.argv[3].split())
pins = sorted(p["identity"] for p in json.load(open(resolved))["pins"]) if os.path.exists(resolved) else []
out = sorted(os.listdir(checkouts)) if os.path.isdir(checkouts) else []
print("Package.resolved:", " ".join(pins)); print("checked out:     ", " ".join(out))
sys.exit(0 if pins == want and out == want else 1)
PY

  check="$name: no warning from swift $verb"
  if grep -i 'warning:' "$log" > "$out/detail"; then bad "$check"; else rm -f "$out/detail"; ok "$check"; fi
  [ "$mode" = resolve ] && return

  check="$name: its program sends one notification to the mock: accepted"
  if (cd "$out/run" && APNS_HOST=localhost APNS_PORT=$MOCK_PORT APNS_CA_FILE=$pki/ca.pem "$dir/.build/debug/Consumer") \
       > "$out/detail" 2>&1 && grep -qE '^accepted 200 - [0-9a-f-]{36}$' "$out/detail"
  then ok "$check"; else bad "$check"; fi
}

consumer by-version ".package(url: \"file://$repo\", from: \"$version\", traits: [])" "swiftpush $expected" build
consumer by-path ".package(path: \"$repo\", traits: [])" "$expected" resolve

echo "consumer: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
