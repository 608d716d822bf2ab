#!/usr/bin/env bash
# Builds Tests/install/go/main.go against the libswiftpush that PKG_CONFIG_PATH (and, for an
# extracted tree, PKG_CONFIG_SYSROOT_DIR) points at, through `#cgo pkg-config: swiftpush` alone:
# every CGO_ variable is unset. The module is a copy outside the repository that `replace`s
# swiftpush.dev/swiftpush with Bindings/go; no network. The build cache is a fresh one: Go's cache
# does not key cgo packages on pkg-config's output, so a cache shared with a build against another
# swiftpush.pc would hand back a package linked with that one's -L (Go's std is precompiled: ~2 s).
# usage: Tests/install/go/build.sh OUTPUT_BINARY   (prints go's output on failure)
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)
output=$1
bash scripts/install-deps.sh go
mod=$(mktemp -d)
cache=$(mktemp -d)
trap 'rm -rf "$mod" "$cache"' EXIT
cp Tests/install/go/main.go "$mod/main.go"
printf 'module example\n\ngo 1.19\n\nrequire swiftpush.dev/swiftpush v0.0.0\n\nreplace swiftpush.dev/swiftpush => %s/Bindings/go\n' "$root" > "$mod/go.mod"
cd "$mod"
env -u CGO_LDFLAGS -u CGO_CFLAGS -u CGO_CPPFLAGS -u LIBRARY_PATH -u C_INCLUDE_PATH -u CPATH \
  GOCACHE="$cache" GOPATH="$root/.build-go/path" GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on \
  go build -o "$output" .
