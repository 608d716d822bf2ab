#!/usr/bin/env bash
# The release's files from `make dist` (scripts/build-dist.sh), each checked as a user would get it:
# - SHA256SUMS names exactly the four files of VERSION's release and `sha256sum -c` accepts them;
# - the source archive unpacks into swiftpush-<version>/ and holds exactly HEAD's files (git
#   ls-tree; without git: LICENSE, VERSION, Package.swift, Tests/dist/run.sh present), no build
#   output (.build*, dist/, out/ at the top: a Tests/dist is source), and its versions agree
#   (scripts/gen_version.py --check on the unpacked tree);
# - the binary tarball unpacks into swiftpush-<version>-linux-<machine>/ with the library
#   (libswiftpush.so.<version>, SONAME libswiftpush.so.0, both links), header, .pc, command, man
#   page, completions, LICENSE and NOTICE; `bin/swiftpush --version` says the version; a C program
#   builds with pkg-config against the unpacked tree where it lies (the .pc is relocatable) and
#   sends a notification, accepted by a mock run by the tarball's own command, loading the tree's
#   library (NEEDED libswiftpush.so.0);
# - the wheel and the .deb carry the version and the license (their own suites test the rest).
# usage: Tests/dist/run.sh RELEASE_DIR DIST_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
dist=$(cd "${2:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
pki=$root/.build-pki
version=$(cat VERSION)
soname=libswiftpush.so.${version%%.*}
arch=$(dpkg --print-architecture)
machine=$(uname -m)
source scripts/mock-ctl.sh
mock_workspace
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

src=swiftpush-$version.tar.gz
bin=swiftpush-$version-linux-$machine.tar.gz
deb=swiftpush_${version}_${arch}.deb
wheels=("$dist"/swiftpush-"$version"-py3-none-manylinux_*.whl)
whl=$(basename "${wheels[0]}")

# -- SHA256SUMS.
if [ -f "$dist/SHA256SUMS" ] && [ "$(awk '{ print $2 }' "$dist/SHA256SUMS" | sort)" = "$(printf '%s\n' "$src" "$bin" "$deb" "$whl" | sort)" ] \
   && (cd "$dist" && sha256sum --quiet --strict -c SHA256SUMS) > "$out/sums.txt" 2>&1; then
  ok "SHA256SUMS: $src, $bin, $deb, $whl, each checked (sha256sum -c)"
else cat "$dist/SHA256SUMS" "$out/sums.txt" 2>/dev/null; bad "SHA256SUMS"; fi

# -- The source archive.
tar -tzf "$dist/$src" > "$out/src-list.txt"
mkdir -p "$out/src" && tar -C "$out/src" -xzf "$dist/$src"
top=swiftpush-$version
problems=()
grep -qv "^$top/" "$out/src-list.txt" && problems+=("members outside $top/: $(grep -v "^$top/" "$out/src-list.txt" | head -3 | tr '\n' ' ')")
# Build output only at the top (anchored): Tests/dist/run.sh is one of the files that must be there.
if grep -E "^$top/(\.build[^/]*|dist|out|\.swiftpm|Package\.resolved)(/|$)" "$out/src-list.txt" > "$out/outputs.txt"; then
  problems+=("build output: $(head -3 "$out/outputs.txt" | tr '\n' ' ')")
fi
for f in VERSION LICENSE NOTICE CHANGELOG.md Package.swift Tests/dist/run.sh scripts/gen_version.py; do
  [ -f "$out/src/$top/$f" ] || problems+=("no $f")
done
[ "$(cat "$out/src/$top/VERSION" 2>/dev/null)" = "$version" ] || problems+=("its VERSION is not $version")
python3 "$out/src/$top/scripts/gen_version.py" --check --root "$out/src/$top" 2> "$out/src-check.txt" \
  || problems+=("its versions disagree: $(cat "$out/src-check.txt")")
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-tree -r --name-only HEAD | sort > "$out/head.txt"
  grep -v '/$' "$out/src-list.txt" | sed "s|^$top/||" | sort > "$out/archived.txt"
  cmp -s "$out/head.txt" "$out/archived.txt" \
    || problems+=("not HEAD's files: $(diff "$out/head.txt" "$out/archived.txt" | grep '^[<>]' | head -3 | tr '\n' ' ')")
fi
[ ${#problems[@]} -eq 0 ] && ok "$src: $(grep -vc '/$' "$out/src-list.txt") files under $top/, no build output, versions agree" \
  || { printf '  %s\n' "${problems[@]}"; bad "the source archive"; }

# -- The binary tarball.
mkdir -p "$out/bin" && tar -C "$out/bin" -xzf "$dist/$bin"
tree=$out/bin/swiftpush-$version-linux-$machine
missing=()
for f in "lib/libswiftpush.so.$version" "lib/$soname" lib/libswiftpush.so lib/pkgconfig/swiftpush.pc include/swiftpush.h \
         bin/swiftpush share/man/man1/swiftpush.1 share/bash-completion/completions/swiftpush \
         share/zsh/site-functions/_swiftpush share/fish/vendor_completions.d/swiftpush.fish \
         share/doc/swiftpush/LICENSE share/doc/swiftpush/NOTICE share/doc/swiftpush/CHANGELOG.md; do
  [ -e "$tree/$f" ] || missing+=("$f")
done
[ "$(ls "$out/bin")" = "$(basename "$tree")" ] || missing+=("(one top directory $(basename "$tree"), found: $(ls "$out/bin" | tr '\n' ' '))")
[ ${#missing[@]} -eq 0 ] && ok "$bin: library, header, .pc, command, man page, completions, LICENSE, NOTICE, CHANGELOG.md" \
  || bad "missing from $bin: ${missing[*]}"
if [ "$(readlink "$tree/lib/$soname")" = "libswiftpush.so.$version" ] && [ "$(readlink "$tree/lib/libswiftpush.so")" = "$soname" ] \
   && grep -qF "Library soname: [$soname]" <<< "$(readelf -d "$tree/lib/libswiftpush.so.$version")" \
   && cmp -s "$tree/share/doc/swiftpush/LICENSE" LICENSE && cmp -s "$tree/share/doc/swiftpush/NOTICE" NOTICE \
   && [ "$("$tree/bin/swiftpush" --version)" = "$version" ]; then
  ok "$bin: libswiftpush.so.$version (SONAME $soname) and its two links; the repository's LICENSE and NOTICE; bin/swiftpush --version: $version"
else ls -l "$tree/lib"; bad "$bin: the library's links, SONAME, the license files or --version"; fi
flags=$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tree/lib/pkgconfig" pkg-config --cflags --libs swiftpush)
if [ "$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$tree/lib/pkgconfig" pkg-config --modversion swiftpush)" = "$version" ] \
   && libdir=$(sed -n 's/.*-L\([^ ]*\).*/\1/p' <<< "$flags") && [ "$(realpath "$libdir")" = "$(realpath "$tree/lib")" ] \
   && gcc -std=c11 -Wall -Wextra -Werror Bindings/c/examples/send_one.c $flags -o "$out/send_one"; then
  ok "a C program builds with pkg-config against the unpacked tree where it lies ($flags)"
else bad "building against the unpacked tarball (pkg-config: $flags)"; fi
mock_start dist "$tree/bin/swiftpush" "$pki"
if env -u LD_PRELOAD LD_LIBRARY_PATH="$tree/lib" SWIFT_BACKTRACE=enable=no "$out/send_one" \
     "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
     00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$MOCK_PORT" "$pki/ca.pem" \
     > "$out/run.txt" 2>&1 && grep -q '^ACCEPTED' "$out/run.txt" \
   && grep -qF "$soname => $tree/lib/$soname" <<< "$(LD_LIBRARY_PATH="$tree/lib" ldd "$out/send_one")"; then
  ok "it runs against the tarball's library (NEEDED $soname), sending to a mock run by the tarball's command: accepted"
else cat "$out/run.txt"; bad "running the C program against the unpacked tarball"; fi

# -- The wheel and the .deb: the version and the license (Tests/wheel, Tests/deb test the rest).
if python3 - "$dist/$whl" "$version" "$soname" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode().splitlines()
assert f"Version: {sys.argv[2]}" in meta and "License-Expression: Apache-2.0" in meta, meta[:12]
assert f"swiftpush/{sys.argv[3]}" in names, names
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
PY
then ok "$whl: Version $version, License-Expression: Apache-2.0, swiftpush/$soname, LICENSE in .dist-info/licenses/"
else bad "the wheel's version, license or library"; fi
if [ "$(dpkg-deb -f "$dist/$deb" Version)" = "$version" ] && grep -q "/usr/share/doc/swiftpush/LICENSE$" <<< "$(dpkg-deb --contents "$dist/$deb")"; then
  ok "$deb: Version $version, /usr/share/doc/swiftpush/LICENSE"
else bad "the .deb's version or license"; fi
echo "dist: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
