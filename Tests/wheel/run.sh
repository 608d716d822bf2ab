#!/usr/bin/env bash
# The wheel from `make wheel` works on its own: installed into a fresh venv from the local file
# only (pip --no-index), `import swiftpush; swiftpush.Client(...)` loads the libswiftpush.so the
# wheel carries (checked in /proc/self/maps) with no SWIFTPUSH_LIBRARY and no LD_LIBRARY_PATH,
# and a notification sent to the mock is accepted. Also checks the wheel's name and tag, and that
# `pip install Bindings/python` from source still installs the pure package.
# usage: Tests/wheel/run.sh RELEASE_DIR DIST_DIR   (RELEASE_DIR holds swiftpush-cli, for the mock)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
dist=$(cd "${2:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
root=$(pwd)
pki=$root/.build-pki
version=$(sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' Include/swiftpush.h)
source scripts/mock-ctl.sh
mock_workspace
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

whl=$dist/swiftpush-$version-py3-none-linux_x86_64.whl
if [ -f "$whl" ] && python3 - "$whl" "swiftpush-$version.dist-info/WHEEL" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert "swiftpush/libswiftpush.so" in z.namelist()
assert "Tag: py3-none-linux_x86_64" in z.read(sys.argv[2]).decode().splitlines()
PY
then
  ok "$(basename "$whl") ($(du -k "$whl" | cut -f1) KiB) carries libswiftpush.so, tagged py3-none-linux_x86_64"
else bad "the wheel's name, tag or contents"; fi

python3 -m venv "$out/venv"
if "$out/venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$whl" > "$out/pip.txt" 2>&1; then
  ok "pip install (--no-index, the local file only) into a fresh venv"
else cat "$out/pip.txt"; bad "pip install of the wheel"; fi

mock_start wheel "$build/swiftpush-cli" "$pki"
cat > "$out/send.py" <<'PY'
import sys
import swiftpush
import swiftpush._ffi as ffi

key, port, ca, venv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
assert swiftpush.__file__.startswith(venv), swiftpush.__file__
maps = [l.split()[-1] for l in open("/proc/self/maps") if l.rstrip().endswith("libswiftpush.so")]
assert maps and all(m.startswith(venv) for m in maps), maps
with swiftpush.Client(host="localhost", port=port, ca_file=ca, key_file=key, key_id="TESTKEY001",
                      team_id="TEAM123456", topic="com.example.app") as client:
    client.send("00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0",
                {"aps": {"alert": "from the wheel"}}, tag=42)
    client.close(drain=10)
    for r in client.results():
        print(r.tag, r.outcome.name, r.status)
print("loaded", maps[0])
PY
# From a directory outside the repository, so the source tree's package cannot be imported.
if (cd "$out" && env -u SWIFTPUSH_LIBRARY -u LD_LIBRARY_PATH -u PYTHONPATH -u LD_PRELOAD SWIFT_BACKTRACE=enable=no \
      "$out/venv/bin/python" send.py "$pki/AuthKey_TESTKEY001.p8" "$MOCK_PORT" "$pki/ca.pem" "$out/venv") > "$out/send.txt" 2>&1 \
   && grep -q '^42 ACCEPTED 200$' "$out/send.txt"; then
  ok "import swiftpush; Client(...) uses the wheel's library (no SWIFTPUSH_LIBRARY, no LD_LIBRARY_PATH): $(head -1 "$out/send.txt")"
else cat "$out/send.txt"; bad "sending through the installed wheel"; fi

# The source install is unchanged: the pure package, which finds the library through SWIFTPUSH_LIBRARY.
python3 -m venv "$out/venv-src"
if "$out/venv-src/bin/python" -m pip install -q --disable-pip-version-check "$root/Bindings/python" > "$out/pip-src.txt" 2>&1 \
   && (cd "$out" && env -u LD_LIBRARY_PATH -u PYTHONPATH SWIFTPUSH_LIBRARY="$build/libswiftpush.so" \
        "$out/venv-src/bin/python" -c 'import swiftpush; print(swiftpush.__version__)') > "$out/src.txt" 2>&1; then
  ok "pip install Bindings/python from source still works (with SWIFTPUSH_LIBRARY): $(cat "$out/src.txt")"
else cat "$out/pip-src.txt" "$out/src.txt" 2>/dev/null; bad "pip install Bindings/python"; fi
echo "wheel: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
