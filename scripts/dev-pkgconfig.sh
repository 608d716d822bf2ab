#!/usr/bin/env bash
# The development swiftpush.pc: the Go binding finds the library with `#cgo pkg-config: swiftpush`,
# so in-repository builds point PKG_CONFIG_PATH at a .pc that names this checkout's Include/ and a
# build directory's libswiftpush.so (with an rpath to it, so test binaries run without
# LD_LIBRARY_PATH). Writes .build-go/pkgconfig-<debug|release|...>/swiftpush.pc and prints its directory:
#   export PKG_CONFIG_PATH=$(scripts/dev-pkgconfig.sh .build/debug)
# usage: scripts/dev-pkgconfig.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: dev-pkgconfig.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^#define PUSH_VERSION_STRING "\(.*\)"/\1/p' "$root/Include/swiftpush.h")
# Programs linked with -lswiftpush load the SONAME (libswiftpush.so.0): its link in BUILD_DIR.
bash "$root/scripts/soname-link.sh" "$build"
dir=$root/.build-go/pkgconfig-$(basename "$build")
mkdir -p "$dir"
cat > "$dir/swiftpush.pc.tmp" <<PC
# Development swiftpush.pc written by scripts/dev-pkgconfig.sh (not installed anywhere).
includedir=$root/Include
libdir=$build

Name: swiftpush
Description: APNs provider client (development build in $build)
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lswiftpush
Cflags: -I\${includedir}
PC
mv "$dir/swiftpush.pc.tmp" "$dir/swiftpush.pc"
echo "$dir"
