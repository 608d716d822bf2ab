#!/usr/bin/env bash
# The public header is generated, self-contained and in step with the library:
#  1. regenerating it from the current build gives exactly the committed Include/swiftpush.h;
#  2. it compiles as C99, C11, C++11 and C++17 with gcc and clang, -Wall -Wextra -pedantic -Werror;
#  3. the push_* functions it declares are exactly the library's exported symbols (nm -D), and
#     the library exports nothing else.
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
grep -q 'SONAME.*libswiftpush.so' <<< "$(readelf -d "$lib")" && ok "SONAME is libswiftpush.so" || bad "SONAME missing"
grep -q 'NODELETE' <<< "$(readelf -d "$lib")" && ok "linked with -z nodelete" || bad "-z nodelete missing"

echo "header: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
