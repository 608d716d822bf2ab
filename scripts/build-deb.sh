#!/usr/bin/env bash
# Builds dist/swiftpush_<version>_<arch>.deb with dpkg-deb: the self-contained libswiftpush.so
# (/usr/lib), swiftpush.h (/usr/include), swiftpush.pc (/usr/lib/pkgconfig), the command
# /usr/bin/swiftpush, its man page and its completions (/usr/share/bash-completion/completions/
# swiftpush, /usr/share/zsh/vendor-completions/_swiftpush, /usr/share/fish/vendor_completions.d/
# swiftpush.fish), from RELEASE_DIR (`make release`). The tree is laid out by
# `make install DESTDIR=... PREFIX=/usr`, so the package and make install cannot drift apart; only
# zsh's directory differs: Debian's zsh looks in vendor-completions for packaged functions.
# Depends is computed, not written by hand: dpkg-shlibdeps reads the ELF files' NEEDED entries and
# maps them through the installed packages' shlibs/symbols files to package names and minimum
# versions (libc6, libssl3, libnghttp2-14, libstdc++6, libgcc-s1 today).
# usage: scripts/build-deb.sh RELEASE_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: build-deb.sh RELEASE_DIR OUT_DIR}
outdir=${2:?usage: build-deb.sh RELEASE_DIR OUT_DIR}
command -v dpkg-shlibdeps >/dev/null || bash scripts/install-deps.sh dpkg-dev
version=$(sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' Include/swiftpush.h)
arch=$(dpkg --print-architecture)
# Maintainer is a required field; the project has no published address yet, so a placeholder in
# the reserved .invalid domain unless DEB_MAINTAINER="Name <address>" is given.
maintainer=${DEB_MAINTAINER:-swiftpush maintainers <maintainers@swiftpush.invalid>}
work=$(pwd)/.build-deb
rm -rf "$work"
root=$work/root
mkdir -p "$root" "$outdir"

make --no-print-directory -s install DESTDIR="$root" PREFIX=/usr RELEASE_DIR="$release" \
  ZSH_COMPLETIONS=/usr/share/zsh/vendor-completions >/dev/null
# Debian's layout: stripped ELF files, a compressed man page, a copyright file, root-owned files.
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/lib/libswiftpush.so" "$root/usr/bin/swiftpush"
gzip -9n "$root/usr/share/man/man1/swiftpush.1"
install -d "$root/usr/share/doc/swiftpush"
cat > "$root/usr/share/doc/swiftpush/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: swiftpush
Comment: built from the swiftpush repository ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)) by scripts/build-deb.sh.
 libswiftpush.so and /usr/bin/swiftpush link the Swift runtime and Foundation statically
 (Apache-2.0 with Runtime Library Exception, swift.org).
TXT
printf 'swiftpush (%s) unstable; urgency=medium\n\n  * Package built by scripts/build-deb.sh.\n\n -- %s  %s\n' \
  "$version" "$maintainer" "$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" | gzip -9n > "$root/usr/share/doc/swiftpush/changelog.gz"

# Depends: dpkg-shlibdeps needs a debian/control to read, in a scratch source tree (its remaining
# warnings, about that scratch layout and the $ORIGIN RUNPATH SwiftPM links in, go to shlibdeps.log).
install -d -m 755 "$root/DEBIAN"
scratch=$work/shlibdeps
mkdir -p "$scratch/debian"
printf 'Source: swiftpush\n\nPackage: swiftpush\nArchitecture: any\n' > "$scratch/debian/control"
depends=$(cd "$scratch" && dpkg-shlibdeps -O -e"$root/usr/lib/libswiftpush.so" -e"$root/usr/bin/swiftpush" 2>"$work/shlibdeps.log" \
          | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { cat "$work/shlibdeps.log" >&2; echo "build-deb: dpkg-shlibdeps computed no Depends" >&2; exit 1; }

cat > "$root/DEBIAN/control" <<CTL
Package: swiftpush
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: net
Priority: optional
Description: APNs provider library (C ABI) and command-line tool
 swiftpush sends Apple Push Notification service (APNs) notifications over its
 own TLS + HTTP/2 connections: libswiftpush.so with the header swiftpush.h and
 swiftpush.pc (cc app.c \$(pkg-config --cflags --libs swiftpush)), and the
 swiftpush command (send, jwt, a mock APNs server, a benchmark).
 The Swift runtime is linked into the library and the command.
CTL
# The library is in a directory ld.so.cache covers: ldconfig runs after install and removal.
echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/triggers" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +

deb=$outdir/swiftpush_${version}_${arch}.deb
rm -f "$deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb ($(du -k "$deb" | cut -f1) KiB; Depends: $depends)"
