#!/usr/bin/env bash
# Builds the Python wheel that carries the library: dist/swiftpush-<version>-py3-none-linux_x86_64.whl.
# A copy of Bindings/python is staged under .build-wheel/ with RELEASE_DIR's libswiftpush.so
# (self-contained: the Swift runtime is linked in; debug symbols stripped) next to the package,
# where swiftpush/_ffi.py looks first, and built by setuptools (pyproject.toml's backend, fetched
# by pip into an isolated build environment). The platform tag is honest: the package is pure
# Python (py3-none) but the library is x86_64 Linux code that needs the system's libssl3 and
# libnghttp2-14 (and glibc), which no manylinux policy allows, hence linux_x86_64, not manylinux.
# `pip install Bindings/python` from the source tree is unchanged (no library inside).
# usage: scripts/build-wheel.sh RELEASE_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: build-wheel.sh RELEASE_DIR OUT_DIR}
outdir=${2:?usage: build-wheel.sh RELEASE_DIR OUT_DIR}
version=$(sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' Include/swiftpush.h)
pyversion=$(sed -n 's/^version = "\(.*\)"$/\1/p' Bindings/python/pyproject.toml)
[ "$version" = "$pyversion" ] || { echo "build-wheel: swiftpush.h says $version, pyproject.toml $pyversion" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "build-wheel: the platform tag below is x86_64 only" >&2; exit 1; }
plat=linux_x86_64

stage=.build-wheel/src
rm -rf .build-wheel
mkdir -p "$stage" "$outdir"
cp -r Bindings/python/pyproject.toml Bindings/python/README.md Bindings/python/swiftpush "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
install -m 755 "$release/libswiftpush.so" "$stage/swiftpush/libswiftpush.so"
strip --strip-unneeded "$stage/swiftpush/libswiftpush.so"
# setuptools' bdist_wheel takes its platform tag from here; the package stays py3-none.
printf '[bdist_wheel]\nplat_name = %s\n' "$plat" > "$stage/setup.cfg"

rm -f "$outdir"/swiftpush-"$version"-*.whl
# pip from a venv of its own: the system python3 may have no pip (Debian's python3 does not).
bash scripts/install-deps.sh
python3 -m venv .build-wheel/venv
.build-wheel/venv/bin/python -m pip wheel -q --no-deps --disable-pip-version-check -w "$outdir" "$stage" >/dev/null
whl=$outdir/swiftpush-$version-py3-none-$plat.whl
[ -f "$whl" ] || { ls -l "$outdir" >&2; echo "build-wheel: $whl was not made" >&2; exit 1; }
python3 - "$whl" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "swiftpush/libswiftpush.so" in names, names
assert "swiftpush/_ffi.py" in names, names
PY
echo "$whl ($(du -k "$whl" | cut -f1) KiB)"
