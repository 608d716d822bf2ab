#!/usr/bin/env bash
# Builds dist/swiftpush_<version>_<arch>.deb with dpkg-deb: the self-contained library
# (/usr/lib/libswiftpush.so.<version>, with the links libswiftpush.so.0 and libswiftpush.so, and a
# shlibs file naming this package for its SONAME), swiftpush.h (/usr/include), swiftpush.pc (/usr/lib/pkgconfig), the command
# /usr/bin/swiftpush, its man page and its completions (/usr/share/bash-completion/completions/
# swiftpush, /usr/share/zsh/vendor-completions/_swiftpush, /usr/share/fish/vendor_completions.d/
# swiftpush.fish), from RELEASE_DIR (`make release`). The tree is laid out by
# `make install DESTDIR=... PREFIX=/usr`, so the package and make install cannot drift apart; only
# zsh's directory differs: Debian's zsh looks in vendor-completions for packaged functions.
# Depends is computed, not written by hand: dpkg-shlibdeps reads the ELF files' NEEDED entries and
# maps them through the installed packages' shlibs/symbols files to package names and minimum
# versions (libc6, libssl3, libnghttp2-14, libstdc++6, libgcc-s1 today). The copyright file is
# machine-readable (DEP-5): the project's Apache-2.0, and the Swift runtime linked in; LICENSE and
# NOTICE themselves are in /usr/share/doc/swiftpush too (make install puts them there).
# usage: scripts/build-deb.sh RELEASE_DIR OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
release=${1:?usage: build-deb.sh RELEASE_DIR OUT_DIR}
outdir=${2:?usage: build-deb.sh RELEASE_DIR OUT_DIR}
command -v dpkg-shlibdeps >/dev/null || bash scripts/install-deps.sh dpkg-dev
version=$(cat VERSION)
arch=$(dpkg --print-architecture)
# Maintainer is a required field; the project has no published address yet, so a placeholder in
# the reserved .invalid domain unless DEB_MAINTAINER="Name <address>" is given.
maintainer=${DEB_MAINTAINER:-swiftpush maintainers <maintainers@swiftpush.invalid>}
work=$(pwd)/.build-deb
rm -rf "$work"
root=$work/root
mkdir -p "$root" "$outdir"

# -o release: make deb has built it; a nested make would run `swift build` twice more for nothing
# (10-15 s each: SwiftPM reloads every manifest when the environment changes, as it does here).
make --no-print-directory -s -o release -o release-lib install DESTDIR="$root" PREFIX=/usr RELEASE_DIR="$release" \
  ZSH_COMPLETIONS=/usr/share/zsh/vendor-completions >/dev/null
# Debian's layout: stripped ELF files, a compressed man page, a copyright file, root-owned files.
# (The library's real file: strip would replace a link with a copy.)
lib=$root/usr/lib/libswiftpush.so.$version
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -L "$root/usr/lib/$soname" ] && [ -L "$root/usr/lib/libswiftpush.so" ] \
  || { echo "build-deb: make install did not lay out $lib with the links $soname and libswiftpush.so" >&2; exit 1; }
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$lib" "$root/usr/bin/swiftpush"
gzip -9n "$root/usr/share/man/man1/swiftpush.1"
install -d "$root/usr/share/doc/swiftpush"
cat > "$root/usr/share/doc/swiftpush/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: swiftpush
Comment: built from the swiftpush repository ($(git rev-parse --short HEAD 2>/dev/null || echo unknown)) by scripts/build-deb.sh.
 LICENSE and NOTICE are in this directory.

Files: *
Copyright: 2026 The swiftpush authors
License: Apache-2.0

Files: usr/lib/libswiftpush.so.*
 usr/bin/swiftpush
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0 with Runtime Library Exception
Comment: the Swift runtime libraries (the standard library; in the command also Foundation and
 Dispatch) from swift.org are linked into these files statically.

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy of
 the License at http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations under
 the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in /usr/share/common-licenses/Apache-2.0.

License: Apache-2.0 with Runtime Library Exception
 The Apache License, Version 2.0 (see above), with this exception:
 .
 As an exception, if you use this Software to compile your source code and
 portions of this Software are embedded into the binary product as a result,
 you may redistribute such product without providing attribution as would
 otherwise be required by Sections 4(a), 4(b) and 4(d) of the License.
TXT
printf 'swiftpush (%s) unstable; urgency=medium\n\n  * Package built by scripts/build-deb.sh.\n\n -- %s  %s\n' \
  "$version" "$maintainer" "$(date -R -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" | gzip -9n > "$root/usr/share/doc/swiftpush/changelog.gz"

# Depends: dpkg-shlibdeps needs a debian/control to read, in a scratch source tree (its remaining
# warnings, about that scratch layout and the $ORIGIN RUNPATH SwiftPM links in, go to shlibdeps.log).
install -d -m 755 "$root/DEBIAN"
scratch=$work/shlibdeps
mkdir -p "$scratch/debian"
printf 'Source: swiftpush\n\nPackage: swiftpush\nArchitecture: any\n' > "$scratch/debian/control"
depends=$(cd "$scratch" && dpkg-shlibdeps -O -e"$lib" -e"$root/usr/bin/swiftpush" 2>"$work/shlibdeps.log" \
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
# shlibs: a package built against this one depends on swiftpush (>= this version) for the SONAME
# (dpkg-shlibdeps reads it; "libswiftpush 0" is SONAME libswiftpush.so.0).
printf 'libswiftpush %s swiftpush (>= %s)\n' "${soname#libswiftpush.so.}" "$version" > "$root/DEBIAN/shlibs"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/triggers" "$root/DEBIAN/shlibs" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 755 {} +

deb=$outdir/swiftpush_${version}_${arch}.deb
rm -f "$deb"
# DEB_XZ_LEVEL (default 6, dpkg-deb's): make test uses 1 (its .deb is a test's, not a release's).
dpkg-deb --root-owner-group -Zxz -z"${DEB_XZ_LEVEL:-6}" --build "$root" "$deb" >/dev/null
echo "$deb ($(du -k "$deb" | cut -f1) KiB; Depends: $depends)"
