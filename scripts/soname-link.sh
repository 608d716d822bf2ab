#!/usr/bin/env bash
# Makes BUILD_DIR/libswiftpush.so.0 (the library's SONAME, read from the file) a link to the
# libswiftpush.so SwiftPM wrote there. A program linked with -lswiftpush records the SONAME as
# NEEDED, so without the link nothing built against a build directory (Tests/c, the Go binding,
# the benchmarks, the demo) would load. Installs carry the real file name instead
# (libswiftpush.so.<version> and both links: make install, the .deb, make dist).
# A library of a build that has no versioned SONAME (an old baseline) is left as it is.
# usage: scripts/soname-link.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: soname-link.sh BUILD_DIR}
lib=$build/libswiftpush.so
[ -f "$lib" ] || { echo "soname-link: $lib is missing" >&2; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "soname-link: $lib has no SONAME" >&2; exit 1; }
if [ "$soname" != libswiftpush.so ]; then
  ln -sfn libswiftpush.so "$build/$soname"
fi
