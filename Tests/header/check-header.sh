#!/usr/bin/env bash
# The public header is generated, self-contained and in step with the library:
#  1. regenerating it from the current build gives exactly the committed Include/swiftpush.h;
#  2. it compiles as C99, C11, C++11 and C++17 with gcc and clang, -Wall -Wextra -pedantic -Werror;
#  3. the push_* functions it declares are exactly the library's exported symbols (nm -D), and
#     the library exports nothing else;
#  4. the library needs only OpenSSL, nghttp2, the Swift runtime and libc, and holds nothing of the
#     packages the Swift API uses (swift-log, swift-metrics, swift-service-lifecycle and
#     swift-async-algorithms under it) nor of the Swift API itself (SwiftPushKit).
# usage: check-header.sh BUILD_DIR   (the debug build directory holding libswiftpush.so)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:?usage: check-header.sh BUILD_DIR}
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 scripts/gen_tables.py --check && ok "generated tables are up to date" || bad "generated tables are stale (make generate)"
python3 scripts/gen_header.py "$build/SwiftPush.build/include/SwiftPush-Swift.h" "$tmp/swiftpush.h"
if diff -u Include/swiftpush.h "$tmp/swiftpush.h" > "$tmp/diff"; then ok "Include/swiftpush.h matches the Swift exports"
else cat "$tmp/diff"; bad "Include/swiftpush.h differs from the regenerated header (make header)"; fi

for compiler in "gcc -std=c99 -x c" "gcc -std=c11 -x c" "clang -std=c11 -x c" "g++ -std=c++11 -x c++" "g++ -std=c++17 -x c++" "clang++ -std=c++17 -x c++"; do
  if $compiler -Wall -Wextra -pedantic -Werror -IInclude -c Tests/header/uses_every_type.c -o "$tmp/o.o" 2> "$tmp/cc"; then ok "header compiles: $compiler"
  else cat "$tmp/cc"; bad "header compiles: $compiler"; fi
done

lib="$build/libswiftpush.so"
nm -D --defined-only "$lib" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sort > "$tmp/exported"
grep -E '^[^/# ].*[ *]push_[a-z_0-9]+\(' Include/swiftpush.h | sed -E 's/^.*[ *](push_[a-z_0-9]+)\(.*$/\1/' | sort > "$tmp/declared"
if diff -u "$tmp/declared" "$tmp/exported" > "$tmp/diff2"; then ok "nm -D and the header list the same $(wc -l < "$tmp/declared") push_* functions"
else cat "$tmp/diff2"; bad "exported symbols and header declarations differ"; fi
# libswiftpush.so.<major of VERSION> (docs/abi.md), and the build directory's link of that name
# (scripts/soname-link.sh) through which the programs linked against it load it.
soname=libswiftpush.so.$(cut -d. -f1 VERSION)
if grep -qF "Library soname: [$soname]" <<< "$(readelf -d "$lib")" && [ "$(readlink "$build/$soname")" = libswiftpush.so ]; then
  ok "SONAME is $soname, and $build/$soname links to the library"
else bad "SONAME is not $soname ($(readelf -d "$lib" | grep SONAME || true)) or $build/$soname is not a link to it"; fi
grep -q 'NODELETE' <<< "$(readelf -d "$lib")" && ok "linked with -z nodelete" || bad "-z nodelete missing"


# Outputs taken whole before grep reads them (with pipefail, an early grep exit would fail the pipe).
needed=$(readelf -d "$lib" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p')
others=$(grep -vE '^(libssl|libcrypto|libnghttp2|libswift[A-Za-z_]*|libm|libc|libstdc\+\+|libgcc_s|libdispatch|libBlocksRuntime|ld-linux[-a-z0-9_.]*)\.so' <<< "$needed" || true)
[ -z "$others" ] && ok "libswiftpush.so needs only OpenSSL, nghttp2, the Swift runtime and libc" \
  || bad "libswiftpush.so needs more: $others"
# Swift symbols carry their module's name mangled as <length><name>.
packages='\$s(7Logging|11CoreMetrics|7Metrics|16ServiceLifecycle|15AsyncAlgorithms|12SwiftPushKit)[0-9]'
if ! grep -qE "$packages" <<< "$(nm "$lib")"; then ok "libswiftpush.so holds nothing of swift-log, swift-metrics, swift-service-lifecycle or SwiftPushKit"
else bad "libswiftpush.so holds symbols of the Swift API's packages"; fi
# The pattern finds them where they are (the Swift API's objects, when the tests were built).
kit=$(ls "$build"/SwiftPushKit.build/APNsClient.swift.o 2>/dev/null || true)
if [ -n "$kit" ]; then
  grep -qE "$packages" <<< "$(nm "$kit")" && ok "the package-symbol pattern finds them in SwiftPushKit's objects" \
    || bad "the package-symbol pattern finds nothing in SwiftPushKit's objects: fix the pattern"
fi

echo "header: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
