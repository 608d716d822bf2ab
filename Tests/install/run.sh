#!/usr/bin/env bash
# `make install PREFIX=...` gives a usable library: installs into a temporary prefix, builds a C
# program with `pkg-config --cflags --libs swiftpush` against the installed copy only, checks
# that the library needs no Swift runtime (ldd), and runs the program against the mock with the
# Swift toolchain's libraries out of reach (LD_LIBRARY_PATH holds the prefix alone). Also: the
# command is installed as bin/swiftpush with its man page (generated from its --help) and its bash,
# zsh and fish completions, which each shell loads from where make install put them and completes
# with (Tests/support/completions.sh), and a Go program builds against the installed copy through
# `#cgo pkg-config: swiftpush`, with no CGO_ flags. The library is installed as
# libswiftpush.so.<version> with the links libswiftpush.so.0 (its SONAME: what the programs load)
# and libswiftpush.so (what -lswiftpush finds), and LICENSE and NOTICE in share/doc/swiftpush.
# usage: Tests/install/run.sh RELEASE_DIR   (holds swiftpush-cli, for the mock)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:?usage: run.sh RELEASE_DIR}" && pwd)
pki=$(pwd)/.build-pki
prefix=$(mktemp -d)
source scripts/mock-ctl.sh
source Tests/support/completions.sh
mock_workspace "$prefix"
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

version=$(cat VERSION)
soname=libswiftpush.so.${version%%.*}
# -o release: make test-install has built it (a nested make would run `swift build` twice more
# for nothing, 10-15 s each); what is tested is what install lays out.
make --no-print-directory -s -o release -o release-lib install PREFIX="$prefix" >/dev/null
[ -f "$prefix/lib/libswiftpush.so" ] && [ -f "$prefix/include/swiftpush.h" ] && [ -f "$prefix/lib/pkgconfig/swiftpush.pc" ] \
  && ok "make install puts the library, the header and swiftpush.pc in PREFIX" || bad "make install layout"
if [ -f "$prefix/lib/libswiftpush.so.$version" ] && [ ! -L "$prefix/lib/libswiftpush.so.$version" ] \
   && [ "$(readlink "$prefix/lib/$soname")" = "libswiftpush.so.$version" ] \
   && [ "$(readlink "$prefix/lib/libswiftpush.so")" = "$soname" ] \
   && grep -qF "Library soname: [$soname]" <<< "$(readelf -d "$prefix/lib/libswiftpush.so.$version")"; then
  ok "lib/libswiftpush.so.$version (SONAME $soname) with the links $soname -> it and libswiftpush.so -> $soname"
else ls -l "$prefix/lib"; bad "the installed library's file name, SONAME or links"; fi
if cmp -s "$prefix/share/doc/swiftpush/LICENSE" LICENSE && cmp -s "$prefix/share/doc/swiftpush/NOTICE" NOTICE \
   && grep -q "Apache License" "$prefix/share/doc/swiftpush/LICENSE"; then
  ok "share/doc/swiftpush holds the project's LICENSE (Apache-2.0) and NOTICE"
else bad "LICENSE and NOTICE in PREFIX/share/doc/swiftpush"; fi
if [ "$("$prefix/bin/swiftpush" --version 2>&1)" = "$version" ]; then
  ok "the installed swiftpush --version prints $version (VERSION)"
else bad "the installed swiftpush --version: $("$prefix/bin/swiftpush" --version 2>&1 | head -3)"; fi

if [ -x "$prefix/bin/swiftpush" ] && "$prefix/bin/swiftpush" --help | grep '^USAGE: swiftpush <command>' >/dev/null; then
  ok "make install puts the command in PREFIX/bin/swiftpush, and it runs"
else bad "PREFIX/bin/swiftpush"; fi
man1=$prefix/share/man/man1/swiftpush.1
if [ -f "$man1" ] && grep -q '^\.TH SWIFTPUSH 1' "$man1" && grep -q '^\.SS send' "$man1" && grep -q 'tokens\\-file' "$man1"; then
  ok "the man page share/man/man1/swiftpush.1 is installed, with a section per command"
else bad "PREFIX/share/man/man1/swiftpush.1"; fi
# zsh's: site-functions under PREFIX, which zsh's own fpath holds for /usr/local (Debian's too).
check_completions "$prefix/bin" "$prefix/share" "$prefix/share/zsh/site-functions"

# ldd's output is taken whole first: under pipefail, grep -q's early exit could SIGPIPE ldd and
# turn a match into a pass.
if grep -qiE 'swift|Foundation|dispatch' <<< "$(ldd "$prefix/lib/libswiftpush.so")"; then
  ldd "$prefix/lib/libswiftpush.so"; bad "the installed library depends on the Swift runtime"
else ok "the installed library needs no Swift runtime (ldd)"; fi

flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs swiftpush)
if gcc -std=c11 -Wall -Wextra -Werror Bindings/c/examples/send_one.c $flags -o "$out/send_one"; then
  ok "a C program builds with pkg-config --cflags --libs swiftpush"
else bad "building against the installed copy"; fi

mock_start install "$prefix/bin/swiftpush" "$pki"
if env -u LD_PRELOAD LD_LIBRARY_PATH="$prefix/lib" SWIFT_BACKTRACE=enable=no "$out/send_one" \
     "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
     00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$MOCK_PORT" "$pki/ca.pem" \
     > "$out/run.txt" 2>&1 && grep -q '^ACCEPTED' "$out/run.txt" \
   && grep -qF "$soname => $prefix/lib/$soname" <<< "$(LD_LIBRARY_PATH="$prefix/lib" ldd "$out/send_one")"; then
  ok "it runs from the installed copy alone (NEEDED $soname) and its notification is accepted"
else cat "$out/run.txt"; bad "running against the installed copy"; fi
if PKG_CONFIG_PATH="$prefix/lib/pkgconfig" bash Tests/install/go/build.sh "$out/go_send" > "$out/go_build.txt" 2>&1; then
  ok "a Go program builds against the installed copy with no CGO_ flags (#cgo pkg-config: swiftpush)"
else cat "$out/go_build.txt"; bad "go build against the installed copy"; fi
if [ -x "$out/go_send" ] && env -u LD_PRELOAD LD_LIBRARY_PATH="$prefix/lib" SWIFT_BACKTRACE=enable=no "$out/go_send" \
     "$pki/AuthKey_TESTKEY001.p8" "$MOCK_PORT" "$pki/ca.pem" > "$out/go_run.txt" 2>&1 && grep -q '^7 ACCEPTED' "$out/go_run.txt"; then
  ok "the Go program runs against the installed copy and its notification is accepted"
else cat "$out/go_run.txt" 2>/dev/null; bad "running the Go program against the installed copy"; fi
echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
