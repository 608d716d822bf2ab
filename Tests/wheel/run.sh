#!/usr/bin/env bash
# The wheel from `make wheel` installs and works anywhere glibc 2.35 does, with no system OpenSSL or
# nghttp2:
# - `make wheel` builds the library alone: `make -n wheel` runs no build of the command
#   (swiftpush-cli) or of anything else but the library product (issue 30: 13 of its 15 minutes
#   went to the CLI and its server dependencies);
# - its metadata says License-Expression: Apache-2.0 and .dist-info/licenses/ holds the project's
#   LICENSE and NOTICE;
# - its name and tag are manylinux (and `auditwheel show`, asked again, agrees), and it carries
#   the library under its SONAME (swiftpush/libswiftpush.so.0) and the vendored libssl, libcrypto
#   and libnghttp2 (swiftpush.libs/);
# - installed into a fresh venv from the local file only (pip --no-index), the library resolves
#   those three to the wheel's copies (ldd); a process that imports swiftpush and sends a
#   notification to the mock (accepted) maps them (/proc/self/maps), and every OpenSSL and nghttp2
#   symbol libswiftpush.so binds is bound to them (LD_DEBUG=bindings), with no SWIFTPUSH_LIBRARY
#   and no LD_LIBRARY_PATH;
# - as root: the same import and send in a private mount namespace (unshare -m) where an empty
#   file is bind-mounted over every system copy of libssl.so.3, libcrypto.so.3 and
#   libnghttp2.so.14 (first shown to be unloadable there), and nothing but the wheel's copies is
#   mapped; there too, with OpenSSL's trust store paths hidden as on a distribution that is not
#   Debian's, a client given no ca_file finds the system's bundle; skipped with a message when not
#   root;
# - the Python suite (Bindings/python/tests, pytest) passes against the installed wheel;
# - `pip install Bindings/python` from source still installs the pure package.
# usage: Tests/wheel/run.sh RELEASE_DIR DIST_DIR   (RELEASE_DIR holds swiftpush-cli, for the mock)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
dist=$(cd "${2:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
root=$(pwd)
pki=$root/.build-pki
version=$(cat VERSION)
soname=libswiftpush.so.${version%%.*}
source scripts/mock-ctl.sh
mock_workspace
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }
# The environment of every Python run below: nothing that could point at another library, nor
# OpenSSL at a trust store (SSL_CERT_FILE, SSL_CERT_DIR: the runs that need one set it).
clean=(env -u SWIFTPUSH_LIBRARY -u LD_LIBRARY_PATH -u PYTHONPATH -u LD_PRELOAD -u SSL_CERT_FILE -u SSL_CERT_DIR
       SWIFT_BACKTRACE=enable=no)

# -- What `make wheel` builds: the library product alone (make -n prints the commands, runs none).
make -n --no-print-directory wheel > "$out/make-n.txt" 2>&1 || true
builds=$(grep -E '(^|[ /])swift build' "$out/make-n.txt" || true)
if [ -n "$builds" ] && ! grep -qvE -- '--product swiftpush$' <<< "$builds" \
   && ! grep -qE 'swiftpush-cli|generate-completion-script|gen_manpage' "$out/make-n.txt" \
   && grep -q 'scripts/build-wheel.sh' "$out/make-n.txt"; then
  ok "make -n wheel: $(wc -l <<< "$builds") swift build, of the library product only (no swiftpush-cli, man page or completions)"
else cat "$out/make-n.txt"; bad "make wheel builds more than the library"; fi

# -- The file.
wheels=("$dist"/swiftpush-"$version"-*.whl)
whl=${wheels[0]}
tag=$(basename "$whl" .whl); tag=${tag#swiftpush-"$version"-}
if [ ${#wheels[@]} -eq 1 ] && [[ "$tag" =~ ^py3-none-manylinux_2_[0-9]+_x86_64$ ]] && python3 - "$whl" "$tag" "$soname" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
assert f"swiftpush/{sys.argv[3]}" in names, names
assert not any(n.endswith("/libswiftpush.so") for n in names), names
for lib in ("libssl-", "libcrypto-", "libnghttp2-"):
    assert any(n.startswith("swiftpush.libs/" + lib) for n in names), (lib, names)
wheel = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode().splitlines()
assert f"Tag: {sys.argv[2]}" in wheel and "Root-Is-Purelib: false" in wheel, wheel
PY
then
  ok "$(basename "$whl") ($(du -k "$whl" | cut -f1) KiB): tagged $tag, carries swiftpush/$soname and swiftpush.libs/ (libssl, libcrypto, libnghttp2)"
else bad "the wheel's name, tag or contents (${wheels[*]##*/})"; fi
if python3 - "$whl" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode().splitlines()
assert "License-Expression: Apache-2.0" in meta, [l for l in meta if l.startswith("License")]
for notice in ("LICENSE", "NOTICE"):
    copy = next(n for n in names if n.endswith(".dist-info/licenses/" + notice))
    assert z.read(copy) == open(notice, "rb").read(), notice
    assert f"License-File: {notice}" in meta, notice
PY
then ok "METADATA: License-Expression: Apache-2.0; .dist-info/licenses/ holds the repository's LICENSE and NOTICE"
else bad "the wheel's license metadata or files"; fi

# auditwheel itself, from the venv scripts/build-wheel.sh made, reads the repaired wheel again.
policy=${tag#py3-none-}
if PATH=$root/.build-wheel-tools/bin:$PATH auditwheel show "$whl" > "$out/show.txt" 2>&1 \
   && tr -s ' \n' ' ' < "$out/show.txt" | grep -qF "consistent with the following platform tag: \"$policy\""; then
  ok "auditwheel show: consistent with $policy"
else cat "$out/show.txt"; bad "auditwheel show does not confirm $policy"; fi

# -- Installed alone.
venv=$out/venv
python3 -m venv "$venv"
if "$venv/bin/python" -m pip install -q --no-index --disable-pip-version-check "$whl" > "$out/pip.txt" 2>&1; then
  ok "pip install (--no-index, the local file only) into a fresh venv"
else cat "$out/pip.txt"; bad "pip install of the wheel"; fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
installed=$site/swiftpush/$soname

# ldd resolves each through the RPATH auditwheel set; the whole listing is taken before filtering.
deps=$(ldd "$installed" 2>&1 || true)
unresolved=$(awk '/lib(ssl|crypto|nghttp2)/ && $3 !~ "^'"$site"'/swiftpush/../swiftpush.libs/" { print $1 " => " $3 }' <<< "$deps")
if [ "$(grep -cE '^\s*lib(ssl|crypto|nghttp2)-[0-9a-f]+\.so.* => '"$site"'/swiftpush/\.\./swiftpush\.libs/' <<< "$deps")" = 3 ] \
   && [ -z "$unresolved" ] && ! grep -q 'not found' <<< "$deps"; then
  ok "ldd: libswiftpush.so resolves libssl, libcrypto and libnghttp2 to the wheel's swiftpush.libs/, nothing else"
else echo "$deps"; bad "ldd of the installed libswiftpush.so${unresolved:+: $unresolved}"; fi

mock_start wheel "$build/swiftpush-cli" "$pki"
send=("$venv/bin/python" "$root/Tests/wheel/send_and_map.py" "$pki/AuthKey_TESTKEY001.p8" "$MOCK_PORT" "$pki/ca.pem" "$venv")
fact() { sed -n "s/^$1=//p" "$2"; }
# From a directory outside the repository, so the source tree's package cannot be imported.
if (cd "$out" && "${clean[@]}" LD_DEBUG=bindings LD_DEBUG_OUTPUT="$out/ld" "${send[@]}") > "$out/send.txt" 2>&1 \
   && [ "$(fact result "$out/send.txt")" = "42 ACCEPTED 200" ] \
   && [[ "$(fact package "$out/send.txt")" == "$site/"* ]] && [ "$(fact library "$out/send.txt")" -ef "$installed" ]; then
  ok "import swiftpush from the venv, Client(...) loads the wheel's library (no SWIFTPUSH_LIBRARY, no LD_LIBRARY_PATH), its notification is accepted"
else cat "$out/send.txt"; bad "sending through the installed wheel"; fi

# /proc/self/maps: the three vendored files are mapped; the system's nghttp2 is not. The system's
# libssl and libcrypto may be, for Python's own ssl module (asyncio imports it), not for ours:
# LD_DEBUG's bindings say which file each symbol libswiftpush.so uses comes from.
vendored=$(fact vendored "$out/send.txt") system=$(fact system "$out/send.txt") python_ssl=$(fact python_ssl "$out/send.txt")
if [ "$(wc -w <<< "$vendored")" = 3 ] && [[ "$vendored" == *libssl-* && "$vendored" == *libcrypto-* && "$vendored" == *libnghttp2-* ]] \
   && [[ "$system" != *nghttp2* ]] && { [ -z "$system" ] || [ -n "$python_ssl" ]; }; then
  ok "/proc/self/maps: the wheel's libssl, libcrypto, libnghttp2 are mapped; the system's nghttp2 is not${system:+ (the system's $(for f in $system; do basename "$f"; done | tr '\n' ' ')mapped for Python's own ${python_ssl// /, })}"
else cat "$out/send.txt"; bad "/proc/self/maps of the sending process"; fi
cat "$out"/ld.* > "$out/bindings.txt" 2>/dev/null || true
if python3 - "$out/bindings.txt" "$installed" "$site/swiftpush.libs/" > "$out/bindings-verdict.txt" 2>&1 <<'PY'
import os, re, sys
text, library, libs = open(sys.argv[1], errors="replace").read(), sys.argv[2], sys.argv[3]
ours = {}
for source, target, symbol in re.findall(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \w+ symbol `([^']+)'", text):
    if source.endswith("/swiftpush/" + os.path.basename(library)) and re.search(r"/lib(ssl|crypto|nghttp2)[-.]", target):
        ours[symbol] = os.path.normpath(target)  # ld.so names them through the RPATH: swiftpush/../
elsewhere = {s: t for s, t in ours.items() if not t.startswith(libs)}
tls = [s for s in ours if s.startswith(("SSL_", "EVP_"))]
http2 = [s for s in ours if s.startswith("nghttp2_")]
assert tls and http2, f"no OpenSSL or nghttp2 binding of libswiftpush.so recorded: {sorted(ours)[:20]}"
assert not elsewhere, f"bound outside the wheel: {elsewhere}"
print(f"{len(ours)} symbols ({len(tls)} SSL_/EVP_, {len(http2)} nghttp2_)")
PY
then
  ok "LD_DEBUG=bindings: every OpenSSL and nghttp2 symbol libswiftpush.so used is bound to the wheel's copies: $(cat "$out/bindings-verdict.txt")"
else cat "$out/bindings-verdict.txt"; bad "libswiftpush.so's symbol bindings"; fi

# -- With no system OpenSSL or nghttp2 at all: a private mount namespace (propagation private, so
# nothing leaks to the machine) where an empty file covers every copy ld.so.cache knows of. There
# too, as on a distribution that is not Debian's, OpenSSL's own trust store paths (the vendored
# copy's OPENSSLDIR, /usr/lib/ssl) are an empty tmpfs, and /etc/ssl a tmpfs whose cert.pem (where
# Alpine keeps its bundle) holds the test CA: a Client given no ca_file must find it and be
# accepted, and with SSL_CERT_FILE naming nothing (left to OpenSSL) must fail.
if [ "$(id -u)" -ne 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
  echo "skipped: the runs without the system's OpenSSL and nghttp2 need root and unshare -m (uid $(id -u))"
else
  hidden=$(for soname in libssl.so.3 libcrypto.so.3 libnghttp2.so.14; do
             awk -v s="$soname" '$1 == s && /x86-64/ { print $NF }' <<< "$(ldconfig -p)"
           done | xargs -r readlink -f | sort -u)
  : > "$out/empty"
  cat > "$out/hidden.py" <<'PY'
import ctypes, sys
for soname in ("libssl.so.3", "libcrypto.so.3", "libnghttp2.so.14"):
    try:
        ctypes.CDLL(soname)
    except OSError:
        continue
    sys.exit(f"{soname} still loads")
print("none of libssl.so.3, libcrypto.so.3, libnghttp2.so.14 loads")
PY
  # The three runs, inside the namespace: with the CA file, with none, with none and SSL_CERT_FILE.
  cat > "$out/isolated.sh" <<'SH'
set -e
for f in $HIDDEN; do mount --bind -o ro "$EMPTY" "$f"; done
mount -t tmpfs none /usr/lib/ssl
mount -t tmpfs none /etc/ssl
cp "$CA" /etc/ssl/cert.pem
"$PYTHON" "$OUT/hidden.py" > "$OUT/hidden.txt"
"$PYTHON" "$SEND" "$KEY" "$PORT" "$CA" "$VENV" > "$OUT/isolated.txt" 2>&1
"$PYTHON" "$SEND" "$KEY" "$PORT" - "$VENV" > "$OUT/system-store.txt" 2>&1
SSL_CERT_FILE=/nonexistent "$PYTHON" "$SEND" "$KEY" "$PORT" - "$VENV" 3000 > "$OUT/no-store.txt" 2>&1
SH
  if [ -n "$hidden" ] && (cd "$out" && "${clean[@]}" HIDDEN="$hidden" EMPTY="$out/empty" OUT="$out" PYTHON="$venv/bin/python" \
        SEND="$root/Tests/wheel/send_and_map.py" KEY="$pki/AuthKey_TESTKEY001.p8" PORT="$MOCK_PORT" CA="$pki/ca.pem" VENV="$venv" \
        unshare -m --propagation private bash "$out/isolated.sh") > "$out/unshare.txt" 2>&1; then
    isolated=1
  else cat "$out/unshare.txt" "$out"/hidden.txt "$out"/isolated.txt 2>/dev/null; isolated=0; fi
  if [ "$isolated" = 1 ] && [ "$(fact result "$out/isolated.txt")" = "42 ACCEPTED 200" ] \
     && [ -z "$(fact system "$out/isolated.txt")" ] && [ "$(fact vendored "$out/isolated.txt" | wc -w)" = 3 ]; then
    ok "without the system's OpenSSL and nghttp2 ($(cat "$out/hidden.txt"): empty files over $(echo $hidden | tr ' ' ',')): import and send accepted, only the wheel's copies mapped"
  else cat "$out/isolated.txt" 2>/dev/null; bad "import and send without the system's OpenSSL and nghttp2"; fi
  if [ "$isolated" = 1 ] && [ "$(fact ca_file "$out/system-store.txt")" = /etc/ssl/cert.pem ] \
     && [ "$(fact result "$out/system-store.txt")" = "42 ACCEPTED 200" ] \
     && [ "$(fact ca_file "$out/no-store.txt")" = None ] && [ "$(fact result "$out/no-store.txt")" = "42 FAILED 0" ]; then
    ok "no ca_file, without OpenSSL's trust store paths: the client finds /etc/ssl/cert.pem and is accepted (with SSL_CERT_FILE naming nothing: FAILED, $(fact reason "$out/no-store.txt"))"
  else cat "$out/system-store.txt" "$out/no-store.txt" 2>/dev/null; bad "the system trust store found by a wheel's client"; fi
fi

# -- The Python suite against the installed wheel: a venv of its own that sees the system
# site-packages for pytest, prometheus_client and redis (installed there as Bindings/run-tests.sh
# does), the wheel installed into it over whatever the system has.
python3 -c 'import pytest' 2>/dev/null || python3 -m pip install -q pytest
python3 -c 'import prometheus_client' 2>/dev/null || python3 -m pip install -q prometheus_client
python3 -c 'import redis' 2>/dev/null || python3 -m pip install -q redis
suite=$out/venv-suite
python3 -m venv --system-site-packages "$suite"
"$suite/bin/python" -m pip install -q --no-index --ignore-installed --no-deps --disable-pip-version-check "$whl" > "$out/pip-suite.txt" 2>&1 \
  || cat "$out/pip-suite.txt"
suite_site=$("$suite/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
if (cd "$out" && "${clean[@]}" SWIFTPUSH_CLI="$build/swiftpush-cli" SWIFTPUSH_PKI="$pki" "$suite/bin/python" -c '
import sys, swiftpush, swiftpush._ffi as f
assert swiftpush.__file__.startswith(sys.argv[1]) and f.lib._name.startswith(sys.argv[1]), (swiftpush.__file__, f.lib._name)' "$suite_site" \
      && "${clean[@]}" SWIFTPUSH_CLI="$build/swiftpush-cli" SWIFTPUSH_PKI="$pki" timeout 600 "$suite/bin/python" -m pytest -q \
           -p no:cacheprovider -W error::pytest.PytestUnraisableExceptionWarning "$root/Bindings/python/tests") > "$out/pytest.txt" 2>&1; then
  ok "the Python suite (Bindings/python/tests) against the installed wheel: $(tail -1 "$out/pytest.txt")"
else tail -40 "$out/pytest.txt"; bad "the Python suite against the installed wheel"; fi

# The source install is unchanged: the pure package, which finds the library through SWIFTPUSH_LIBRARY.
python3 -m venv "$out/venv-src"
if "$out/venv-src/bin/python" -m pip install -q --disable-pip-version-check "$root/Bindings/python" > "$out/pip-src.txt" 2>&1 \
   && (cd "$out" && env -u LD_LIBRARY_PATH -u PYTHONPATH SWIFTPUSH_LIBRARY="$build/libswiftpush.so" \
        "$out/venv-src/bin/python" -c 'import swiftpush; print(swiftpush.__version__)') > "$out/src.txt" 2>&1; then
  ok "pip install Bindings/python from source still works (with SWIFTPUSH_LIBRARY): $(cat "$out/src.txt")"
else cat "$out/pip-src.txt" "$out/src.txt" 2>/dev/null; bad "pip install Bindings/python"; fi
echo "wheel: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
