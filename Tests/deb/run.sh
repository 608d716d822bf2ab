#!/usr/bin/env bash
# The .deb from `make deb`: its control file passes lint-style checks (the fields Debian policy
# requires, a valid version, the build machine's architecture, a Depends that names the package
# of every library the ELF files need, each satisfiable here; md5sums match; root-owned files),
# and its files work from an extracted tree alone: `dpkg-deb -x` into a temporary root, then a C
# program built with pkg-config (PKG_CONFIG_LIBDIR and PKG_CONFIG_SYSROOT_DIR on that tree, no
# system .pc files) and a Go program (pkg-config, no CGO_ flags) each send a notification to a
# mock run by the package's own /usr/bin/swiftpush; bash, zsh and fish load the package's
# completions from its tree and complete with them (Tests/support/completions.sh). The library is
# libswiftpush.so.<version> with the links libswiftpush.so.0 (its SONAME, which the programs built
# against it need) and libswiftpush.so, and DEBIAN/shlibs maps the SONAME to this package; the
# copyright file is DEP-5 with the project's Apache-2.0, beside LICENSE and NOTICE themselves.
# Runs lintian too when it is installed (it is not installed for this test: ~150 packages).
# usage: Tests/deb/run.sh RELEASE_DIR DIST_DIR
set -euo pipefail
cd "$(dirname "$0")/../.."
root_repo=$(pwd)
dist=$(cd "${2:?usage: run.sh RELEASE_DIR DIST_DIR}" && pwd)
pki=$root_repo/.build-pki
version=$(cat VERSION)
our_soname=libswiftpush.so.${version%%.*}
arch=$(dpkg --print-architecture)
deb=$dist/swiftpush_${version}_${arch}.deb
source scripts/mock-ctl.sh
source Tests/support/completions.sh
mock_workspace
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

[ -f "$deb" ] || { echo "FAILED: $deb is missing (make deb)"; exit 1; }
if dpkg-deb --info "$deb" > "$out/info.txt"; then
  ok "dpkg-deb --info reads $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"
else bad "dpkg-deb --info"; fi

# -- The control file, checked the way lintian would check the essentials.
ctl=$out/control
dpkg-deb -e "$deb" "$ctl"
field() { dpkg-deb -f "$deb" "$1"; }
problems=()
for f in Package Version Architecture Maintainer Description Installed-Size Depends Section Priority; do
  [ -n "$(field "$f")" ] || problems+=("no $f field")
done
[[ "$(field Package)" =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || problems+=("package name '$(field Package)' is not a valid Debian name")
[ "$(field Version)" = "$version" ] || problems+=("Version $(field Version), swiftpush.h says $version")
dpkg --validate-version "$(field Version)" 2>/dev/null || problems+=("Version is not a valid Debian version")
[ "$(field Architecture)" = "$arch" ] || problems+=("Architecture $(field Architecture), this machine is $arch")
[[ "$(field Maintainer)" =~ ^[^\<]+\ \<[^@\>]+@[^\>]+\>$ ]] || problems+=("Maintainer is not 'Name <address>'")
[[ "$(field Installed-Size)" =~ ^[0-9]+$ ]] || problems+=("Installed-Size is not a number of KiB")
# (Files, not pipes: under pipefail a reader that stops early would fail the writer with SIGPIPE.)
field Description > "$out/description"
synopsis=$(sed -n 1p "$out/description")
[ ${#synopsis} -le 80 ] || problems+=("the Description synopsis is longer than 80 characters")
[ "$(wc -l < "$out/description")" -gt 1 ] || problems+=("the Description has no extended part")
! grep -q $'\t' "$ctl/control" || problems+=("a tab in the control file")
grep -q '^ *$' "$ctl/control" && problems+=("an empty line inside the control paragraph")
# Every dependency parses and is satisfiable by what is installed here.
IFS=',' read -ra deps <<< "$(field Depends)"
for d in "${deps[@]}"; do
  if [[ "$d" =~ ^\ *([a-z0-9][a-z0-9+.-]+)(:[a-z0-9]+)?\ *(\((>=|<=|>>|<<|=)\ *([^\)]+)\))?\ *$ ]]; then
    name=${BASH_REMATCH[1]} op=${BASH_REMATCH[4]} want=${BASH_REMATCH[5]}
    have=$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)
    if [ -z "$have" ]; then problems+=("Depends names $name, which is not installed here")
    elif [ -n "$op" ] && ! dpkg --compare-versions "$have" "$([ "$op" = ">=" ] && echo ge || echo "$op" | sed 's/<=/le/;s/>>/gt/;s/<</lt/;s/=/eq/')" "$want"; then
      problems+=("Depends $name ($op $want), installed $have")
    fi
  else problems+=("unparsable Depends entry '$d'"); fi
done
if [ ${#problems[@]} -eq 0 ]; then
  ok "control: required fields, name, version, architecture, maintainer, description; Depends: $(field Depends)"
else printf '  %s\n' "${problems[@]}"; bad "control file checks"; fi

# -- The files.
tree=$out/root
dpkg-deb -x "$deb" "$tree"
missing=()
for f in usr/lib/libswiftpush.so.$version usr/include/swiftpush.h usr/lib/pkgconfig/swiftpush.pc usr/bin/swiftpush \
         usr/share/man/man1/swiftpush.1.gz usr/share/doc/swiftpush/copyright \
         usr/share/bash-completion/completions/swiftpush usr/share/zsh/vendor-completions/_swiftpush \
         usr/share/fish/vendor_completions.d/swiftpush.fish; do
  [ -e "$tree/$f" ] || missing+=("$f")
done
[ ${#missing[@]} -eq 0 ] && ok "dpkg-deb -x: library, header, .pc, /usr/bin/swiftpush, man page, copyright, bash/zsh/fish completions" \
  || bad "missing from the package: ${missing[*]}"

# -- The SONAME: the real file, the two links, shlibs.
if [ -f "$tree/usr/lib/libswiftpush.so.$version" ] && [ ! -L "$tree/usr/lib/libswiftpush.so.$version" ] \
   && [ "$(readlink "$tree/usr/lib/$our_soname")" = "libswiftpush.so.$version" ] \
   && [ "$(readlink "$tree/usr/lib/libswiftpush.so")" = "$our_soname" ] \
   && grep -qF "Library soname: [$our_soname]" <<< "$(readelf -d "$tree/usr/lib/libswiftpush.so.$version")" \
   && [ "$(cat "$ctl/shlibs")" = "libswiftpush ${version%%.*} swiftpush (>= $version)" ]; then
  ok "usr/lib: libswiftpush.so.$version (SONAME $our_soname), $our_soname -> it, libswiftpush.so -> $our_soname; shlibs: $(cat "$ctl/shlibs")"
else ls -l "$tree/usr/lib"; cat "$ctl/shlibs" 2>/dev/null; bad "the library's SONAME layout or shlibs"; fi

# -- The license: a DEP-5 copyright naming Apache-2.0 for every file, LICENSE and NOTICE as in the repository.
doc=$tree/usr/share/doc/swiftpush
if python3 - "$doc/copyright" <<'PY'
import sys
paragraphs = [p for p in open(sys.argv[1], encoding="utf-8").read().split("\n\n") if p.strip()]
fields = []
for p in paragraphs:
    f = {}
    for line in p.splitlines():
        if line[:1] in (" ", "\t"):
            continue
        key, sep, value = line.partition(":")
        assert sep, f"not a field: {line!r}"
        f[key] = value.strip()
    fields.append(f)
assert fields[0]["Format"] == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/", fields[0]
assert fields[0]["Upstream-Name"] == "swiftpush"
every = [f for f in fields if f.get("Files") == "*"]
assert len(every) == 1 and every[0]["License"] == "Apache-2.0" and every[0].get("Copyright"), every
named = {f["License"] for f in fields if "Files" in f}
standalone = {f["License"] for f in fields if "Files" not in f and "License" in f}
assert named <= standalone, f"licenses without their text: {named - standalone}"
PY
then
  if cmp -s "$doc/LICENSE" LICENSE && cmp -s "$doc/NOTICE" NOTICE; then
    ok "copyright is DEP-5 (Files: * is Apache-2.0, every license named has its paragraph); LICENSE and NOTICE in /usr/share/doc/swiftpush"
  else bad "LICENSE or NOTICE missing from /usr/share/doc/swiftpush or not the repository's"; fi
else bad "usr/share/doc/swiftpush/copyright is not DEP-5 with Apache-2.0"; fi

# Depends checked against the binaries themselves, independently of dpkg-shlibdeps: each NEEDED
# library is found by dpkg -S in an installed package that Depends names.
depnames=" $(field Depends | sed 's/([^)]*)//g; s/,/ /g') "
unlisted=()
for elf in "$tree/usr/lib/libswiftpush.so.$version" "$tree/usr/bin/swiftpush"; do
  for soname in $(objdump -p "$elf" | awk '$1 == "NEEDED" { print $2 }'); do
    # Each listing is taken whole before it is filtered: with pipefail, a filter that stops early
    # (awk's exit, head -1) cuts the writer short with SIGPIPE, and the script died with 141.
    path=$(awk -v s="$soname" '$1 == s && /x86-64/ && !found { print $NF; found = 1 }' <<< "$(ldconfig -p)")
    pkg=$(sed -n '1s/:.*//p' <<< "$(dpkg -S "$(readlink -f "$path")" 2>/dev/null || true)")
    [ -n "$pkg" ] || pkg=$(sed -n '1s/:.*//p' <<< "$(dpkg -S "$path" 2>/dev/null || true)")
    [[ "$depnames" == *" $pkg "* ]] || unlisted+=("$soname ($pkg)")
  done
done
[ ${#unlisted[@]} -eq 0 ] && ok "every NEEDED library's package (objdump -p, dpkg -S) is in Depends" \
  || bad "NEEDED but not in Depends: ${unlisted[*]}"
dpkg-deb --contents "$deb" > "$out/contents.txt"
if awk '$2 != "root/root" { bad = 1 } END { exit bad }' "$out/contents.txt"; then
  ok "every file in the package is owned by root/root"
else bad "files not owned by root/root in the package"; fi
if (cd "$tree" && md5sum --quiet -c "$ctl/md5sums") > "$out/md5.txt" 2>&1; then
  ok "DEBIAN/md5sums matches every file"
else cat "$out/md5.txt"; bad "md5sums"; fi
zcat "$tree/usr/share/man/man1/swiftpush.1.gz" > "$out/swiftpush.1"
if grep -q '^\.SS send' "$out/swiftpush.1" && { ! command -v man >/dev/null || man -l "$tree/usr/share/man/man1/swiftpush.1.gz" >/dev/null 2>&1; }; then
  ok "the man page renders (man -l) and documents the commands"
else bad "the man page"; fi
# The completions where Debian's shells look: bash-completion's and fish's vendor directories
# under /usr/share, zsh's vendor-completions (in Debian's zsh fpath; upstream's site-functions is not).
check_completions "$tree/usr/bin" "$tree/usr/share" "$tree/usr/share/zsh/vendor-completions"
# ... which are the directories Debian's zsh and fish search with no configuration at all.
if grep -qx /usr/share/zsh/vendor-completions <<< "$(zsh -f -c 'print -l $fpath')" \
   && env -i HOME="$out/home" PATH=/usr/bin:/bin fish -c 'contains /usr/share/fish/vendor_completions.d $__fish_vendor_completionsdirs'; then
  ok "Debian's zsh (fpath) and fish (vendor completion directories) search /usr/share/zsh/vendor-completions and /usr/share/fish/vendor_completions.d by default"
else bad "the package's completion directories are not where Debian's zsh and fish look by default"; fi
if command -v lintian >/dev/null; then
  if lintian --no-tag-display-limit "$deb" > "$out/lintian.txt" 2>&1; then ok "lintian: no errors"
  else cat "$out/lintian.txt"; bad "lintian"; fi
fi

# -- Building and running against the extracted tree only.
export PKG_CONFIG_LIBDIR=$tree/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$tree
unset PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs swiftpush)
if [ "$(pkg-config --modversion swiftpush)" = "$version" ] \
   && gcc -std=c11 -Wall -Wextra -Werror Bindings/c/examples/send_one.c $flags -o "$out/send_one"; then
  ok "a C program builds with pkg-config against the extracted tree ($flags)"
else bad "building the C program against the extracted tree"; fi
mock_start deb "$tree/usr/bin/swiftpush" "$pki"
if env -u LD_PRELOAD LD_LIBRARY_PATH="$tree/usr/lib" SWIFT_BACKTRACE=enable=no "$out/send_one" \
     "$pki/AuthKey_TESTKEY001.p8" TESTKEY001 TEAM123456 com.example.app \
     00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0 localhost "$MOCK_PORT" "$pki/ca.pem" \
     > "$out/run.txt" 2>&1 && grep -q '^ACCEPTED' "$out/run.txt" \
   && grep -qF "$our_soname => $tree/usr/lib/$our_soname" <<< "$(LD_LIBRARY_PATH="$tree/usr/lib" ldd "$out/send_one")"; then
  ok "it runs against the package's library (NEEDED $our_soname), sending to a mock run by the package's /usr/bin/swiftpush: accepted"
else cat "$out/run.txt"; bad "running the C program against the extracted tree"; fi
if bash Tests/install/go/build.sh "$out/go_send" > "$out/go_build.txt" 2>&1 \
   && env -u LD_PRELOAD LD_LIBRARY_PATH="$tree/usr/lib" "$out/go_send" "$pki/AuthKey_TESTKEY001.p8" "$MOCK_PORT" "$pki/ca.pem" \
        > "$out/go_run.txt" 2>&1 && grep -q '^7 ACCEPTED' "$out/go_run.txt"; then
  ok "a Go program builds against the extracted tree with no CGO_ flags, and its notification is accepted"
else cat "$out/go_build.txt" "$out/go_run.txt" 2>/dev/null; bad "the Go program against the extracted tree"; fi
echo "deb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
