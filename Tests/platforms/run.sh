#!/usr/bin/env bash
# What runs where (README, "Platforms"): swiftpush is Linux only (its event loop is epoll and
# eventfd). A build for another system must stop with one sentence saying so, not a page of
# errors about epoll: the C shim's header (CPushSystem), compiled for macOS and FreeBSD, gives that
# sentence as its only error, and the transport's Swift (PushTransport/Platform.swift),
# type-checked for macOS, gives it too; both still compile for Linux. No package in the
# repository declares another platform (the example once declared macOS), and README says which
# platforms, toolchain and distribution are supported and tested.
# usage: Tests/platforms/run.sh   (needs clang and swiftc from the toolchain; builds nothing)
set -euo pipefail
cd "$(dirname "$0")/../.."
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sentence="swiftpush supports Linux only"

header=Sources/CPushSystem/swiftpush_system.h
for target in arm64-apple-macos14 x86_64-unknown-freebsd14; do
  if clang -fsyntax-only --target="$target" -x c "$header" > "$tmp/cc" 2>&1; then
    bad "$header compiles for $target"
  elif [ "$(grep -c 'error:' "$tmp/cc")" = 1 ] && grep 'error:' "$tmp/cc" | grep -qF "$sentence"; then
    ok "$header for $target: one error, \"$(grep -o "$sentence[^\"]*" "$tmp/cc" | head -1)\""
  else cat "$tmp/cc"; bad "$header for $target: not the one sentence"; fi
done
clang -fsyntax-only -Werror -x c "$header" && ok "$header compiles for Linux" || bad "$header for Linux"

platform=Sources/PushTransport/Platform.swift
if swiftc -typecheck -parse-stdlib -target arm64-apple-macosx14.0 "$platform" > "$tmp/swiftc" 2>&1; then
  bad "$platform type-checks for macOS"
elif grep 'error:' "$tmp/swiftc" | grep -qF "$sentence"; then
  ok "$platform for macOS: error: $sentence..."
else cat "$tmp/swiftc"; bad "$platform for macOS: not the sentence"; fi
swiftc -typecheck -parse-stdlib "$platform" && ok "$platform type-checks for Linux" || bad "$platform for Linux"

# Package.swift files (not build directories' checkouts): none may declare a platform.
declared=$(find . -name Package.swift -not -path './.build*' -not -path '*/.build*' -print0 | xargs -0 grep -l 'platforms:' || true)
[ -z "$declared" ] && ok "no Package.swift declares platforms (Linux is not declared in SwiftPM; others are not supported)" \
  || bad "platforms declared in: $declared"

section=$(awk '/^## Platforms$/ { on = 1; next } on && /^## / { exit } on' README.md)
if grep -q 'Linux only' <<< "$section" && grep -q 'epoll' <<< "$section" && grep -q 'Debian 12' <<< "$section" \
   && grep -q "Swift $(swiftc --version 2>&1 | sed -n 's/.*Swift version \([0-9]*\.[0-9]*\).*/\1/p' | head -1)" <<< "$section"; then
  ok "README's Platforms section: Linux only (epoll), Debian 12, the Swift version of this toolchain (major.minor)"
else bad "README has no Platforms section saying Linux only (epoll), Debian 12 and the Swift version tested"; fi
echo "platforms: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
