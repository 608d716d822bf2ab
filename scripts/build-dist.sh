#!/usr/bin/env bash
# `make dist`: a release's files, in OUT_DIR (dist/), all named for VERSION:
#   swiftpush-<version>.tar.gz                  the source (git archive of HEAD, under swiftpush-<version>/)
#   swiftpush-<version>-py3-none-manylinux_2_35_x86_64.whl   from make wheel (already there)
#   swiftpush_<version>_<arch>.deb              from make deb (already there)
#   swiftpush-<version>-linux-<machine>.tar.gz  the binaries for any Linux with glibc 2.35+ and
#       OpenSSL 3 and nghttp2 installed, under swiftpush-<version>-linux-<machine>/: lib/ (the
#       library, its SONAME link and libswiftpush.so, pkgconfig/swiftpush.pc), include/, bin/,
#       share/ (man page, bash/zsh/fish completions, doc/swiftpush: LICENSE, NOTICE, CHANGELOG.md),
#       laid out by make install; the .pc finds its directory itself (${pcfiledir}), so the tree
#       works wherever it is unpacked
#   SHA256SUMS                                  of the four (sha256sum -c reads it)
# Without a git checkout (a copy of the tree, or a git that refuses the directory's owner), the
# source archive is a tar of the tree without what .gitignore names as build output.
# usage: scripts/build-dist.sh RELEASE_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: build-dist.sh RELEASE_DIR OUT_DIR}
outdir=${2:?usage: build-dist.sh RELEASE_DIR OUT_DIR}
version=$(cat VERSION)
arch=$(dpkg --print-architecture)
machine=$(uname -m)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
wheels=("$outdir"/swiftpush-"$version"-py3-none-*.whl)
whl=${wheels[0]}
deb=$outdir/swiftpush_${version}_${arch}.deb
[ ${#wheels[@]} -eq 1 ] && [ -f "$whl" ] && [ -f "$deb" ] \
  || { echo "build-dist: make wheel and make deb first (one wheel and the .deb of $version in $outdir)" >&2; exit 1; }

# -- The source archive.
src=swiftpush-$version.tar.gz
rm -f "$outdir/$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  [ -z "$(git status --porcelain --untracked-files=no)" ] \
    || echo "build-dist: warning: uncommitted changes are not in $src (git archive of HEAD)" >&2
  [ "$(git describe --exact-match --tags HEAD 2>/dev/null || true)" = "$version" ] \
    || echo "build-dist: note: HEAD is not tagged $version (README, Releases: tag, then make dist)" >&2
  git archive --format=tar.gz --prefix="swiftpush-$version/" -o "$outdir/$src" HEAD
else
  # Build output is left out by its top-level name only (Tests/dist is source); the prefix is not
  # applied to symbolic links' targets (S), which are relative (Bindings/python/LICENSE).
  entries=()
  for e in * .[!.]*; do
    case "$e" in .build*|dist|out|.git|.swiftpm|Package.resolved) ;; *) [ -e "$e" ] && entries+=("$e") ;; esac
  done
  tar -czf "$outdir/$src" --transform "s|^|swiftpush-$version/|S" --exclude='__pycache__' --exclude='*.pyc' "${entries[@]}"
fi

# -- The binary tarball, laid out by make install (as the .deb is).
name=swiftpush-$version-linux-$machine
work=$(pwd)/.build-dist
rm -rf "$work"
mkdir -p "$work/root"
# -o release: make dist has built it; a nested make would run `swift build` twice more for nothing
# (10-15 s each: SwiftPM reloads every manifest when the environment changes, as it does here).
make --no-print-directory -s -o release -o release-lib install DESTDIR="$work/root" PREFIX=/usr/local RELEASE_DIR="$release" >/dev/null
mv "$work/root/usr/local" "$work/$name"
tree=$work/$name
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$tree/lib/libswiftpush.so.$version" "$tree/bin/swiftpush"
sed -i 's|^prefix=.*|prefix=${pcfiledir}/../..|' "$tree/lib/pkgconfig/swiftpush.pc"
install -m 644 CHANGELOG.md "$tree/share/doc/swiftpush/CHANGELOG.md"
bin=$name.tar.gz
rm -f "$outdir/$bin"
# Reproducible: sorted names, root-owned, every date the last commit's (or now, without git).
stamp=$(git log -1 --format=%ct 2>/dev/null || date +%s)
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$stamp" -czf "$outdir/$bin" "$name"

(cd "$outdir" && sha256sum "$src" "$(basename "$whl")" "$(basename "$deb")" "$bin" > SHA256SUMS)
echo "dist: $(tr '\n' ' ' < <(cut -d' ' -f3 "$outdir/SHA256SUMS")) SHA256SUMS"
