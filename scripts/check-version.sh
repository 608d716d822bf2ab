#!/usr/bin/env bash
# `make test-version`: every place that states the release's version says the one in VERSION
# (scripts/gen_version.py --check: the headers, push_version() and `swiftpush --version`'s Swift
# constant, Python's __version__ and pyproject.toml, Go's Version, the SONAME in Package.swift and
# the Python loader, README's names), and CHANGELOG.md has a section for it. First a self-test:
# on a copy of those files, a version changed in any one place must make the check fail, naming
# that file, so that the check cannot pass by checking nothing.
# (The built artefacts' own versions are tested where they are built: Tests/cli, the bindings'
# suites, Tests/install, Tests/wheel, Tests/deb, Tests/dist.)
set -euo pipefail
cd "$(dirname "$0")/.."
pass=0; fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAILED: $1"; fail=$((fail + 1)); }

version=$(tr -d '[:space:]' < VERSION)
places=$(python3 -c '
import importlib.util, sys
spec = importlib.util.spec_from_file_location("g", "scripts/gen_version.py")
g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g)
print("\n".join(dict.fromkeys(p for p, _ in g.PLACES)))')

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
seed() {
  rm -rf "$copy"/*
  cp --parents VERSION scripts/gen_version.py $places "$copy/"
}
seed
if python3 "$copy/scripts/gen_version.py" --check --root "$copy" 2>"$copy.err"; then
  ok "self-test: an unchanged copy passes"
else cat "$copy.err"; bad "self-test: an unchanged copy fails"; fi
missed=()
for place in $places; do
  seed
  # The first occurrence of the version (or, in the SONAME files, of the quoted SONAME) changed.
  python3 - "$copy/$place" "$version" <<'PY'
import re, sys
path, version = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
if version in text:
    text = text.replace(version, "9" + version, 1)
else:
    text, n = re.subn(r"\"libswiftpush\.so\.[0-9]+\"", "\"libswiftpush.so.99\"", text, count=1)
    assert n == 1, path
open(path, "w", encoding="utf-8").write(text)
PY
  if python3 "$copy/scripts/gen_version.py" --check --root "$copy" 2>"$copy.err" || ! grep -qF "$place" "$copy.err"; then
    missed+=("$place")
  fi
done
rm -f "$copy.err"
[ ${#missed[@]} -eq 0 ] && ok "self-test: a version changed in any one of $(wc -w <<< "$places") files fails the check, naming it" \
  || bad "self-test: a changed version not caught in ${missed[*]}"

if python3 scripts/gen_version.py --check; then
  ok "every place says version $version (VERSION): $(tr '\n' ' ' <<< "$places")"
else bad "places that disagree with VERSION ($version): run make version"; fi
if grep -qE "^## \[?$(sed 's/\./\\./g' <<< "$version")\]?( |$)" CHANGELOG.md; then
  ok "CHANGELOG.md has a section for $version"
else bad "CHANGELOG.md has no '## $version' section"; fi
echo "version: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
