#!/usr/bin/env python3
"""Checks that the documents' code names still exist (issue 25 item 6: docs/architecture.md had
drifted, naming functions that no longer existed; issue 34 item 5: every document, not only that
one).

usage: scripts/check-doc-names.py --all | DOC.md [DOC.md ...]
       scripts/check-doc-names.py --self-test

`--all` checks every Markdown file of the repository (`git ls-files '*.md'`; there is no vendored
text among them). Every `backticked` span is read as code: a path (`scripts/gen_tables.py`,
`Tables/*.tsv`) must exist in the repository; a file name (`PushClient+Send.swift`) must exist
somewhere in it; `make X` must be a Makefile target; every identifier in the span
(`PushClient.send`, `retire()`, `withLock { h in … }`) must appear as a whole word in the
repository's code (Sources/, Tests/, scripts/, Bindings/, FuzzTesting/, Examples/: Swift, C,
Python, Go, shell, Lua, the tables) or be a target's name. Spans that are not code — header
names (`apns-id`), flags, numbers, formulas (`d/2..d`) — are told apart by their shape; a
placeholder (`<harness>`) stands for any name. What a document may name that is not in the
repository is listed below, a few names per reason: what builds and installs write, what tests
write, and other software's names. Prints each name that is missing with its line; exits 1 if
any is.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Words that appear in backticks as prose or as Swift keywords.
NOT_CODE = {
    "in", "h", "condition", "public", "package", "make", "true", "false", "nil", "self",
}

# Where builds write (the Makefile's DEBUG_DIR and RELEASE_SCRATCH, Tests/fuzz/run.sh's scratch
# path; `<bin>`, any build's bin directory): a path under one is an artefact, not a tracked file.
BUILD_DIRECTORIES = {".build", ".build-release", ".build-fuzz", "<bin>"}

# What `make install PREFIX=...` and the .deb put in place (Makefile, install target;
# scripts/build-deb.sh): paths of an installed tree, not of the repository.
INSTALLED_PATHS = {
    "lib/libswiftpush.so", "include/swiftpush.h", "lib/pkgconfig/swiftpush.pc", "bin/swiftpush",
    "share/", "share/man/man1/swiftpush.1", "man1/swiftpush.1", "completions/", "PREFIX/share",
    "PREFIX/share/bash-completion/completions/swiftpush", "PREFIX/share/zsh/site-functions",
    "PREFIX/share/zsh/site-functions/_swiftpush", "PREFIX/share/fish/vendor_completions.d/swiftpush.fish",
    # The versioned file and its links (docs/abi.md), the license files (share/doc), and the
    # release tarball's layout (scripts/build-dist.sh), as README's Install and Releases name them.
    "lib/libswiftpush.so.<version>", "share/doc/swiftpush/", "lib/", "pkgconfig/swiftpush.pc",
}

# What the wheel holds (scripts/build-wheel.sh; auditwheel names `swiftpush.libs/` and the
# RPATH): paths inside the installed Python package.
WHEEL_PATHS = {"swiftpush/libswiftpush.so", "swiftpush.libs/", "$ORIGIN/../swiftpush.libs", "swiftpush/vendored-licenses/",
               # The library under its SONAME (docs/abi.md) and the license files' place in the metadata.
               "swiftpush/libswiftpush.so.0", "swiftpush/libswiftpush.so.MAJOR", ".dist-info/licenses/"}

# Files a test run writes (Tests/status/run.sh's default screenshot directory, `make test-status`).
WRITTEN_FILES = {"out/status/status-page.png",
                 # What `swiftpush mock --quickstart DIR` writes (README, "Getting started").
                 "DIR/env.sh",
                 # A release's .deb, named by its version (README, "Releases").
                 "swiftpush_X.Y.Z_amd64.deb"}

# Other software's files, cited where the docs explain its behaviour: nghttp2's HPACK encoder
# (docs/apns.md) and the Swift toolchain's clang runtime directory (Tests/fuzz/README.md).
EXTERNAL_PATHS = {"lib/nghttp2_hd.c", "lib/clang/*/lib/linux",
                  # The Go module path, which nothing serves yet (Bindings/go/README.md says so).
                  "swiftpush.dev/swiftpush"}

# Other software's names, by where they come from; the code never spells them.
EXTERNAL_NAMES = {
    # OpenSSL 3's per-record work measured in the mock's profile (docs/mock.md).
    "EVP_CIPHER_CTX_get_iv_length", "EVP_CIPHER_CTX_ctrl", "OSSL_PARAM_locate",
    # nghttp2's HPACK function that never indexes `authorization` (docs/apns.md).
    "deflate_nv",
    # libdispatch's symbol that the static-stdlib library would leak (docs/toolchain.md).
    "__dispatch_tsd",
    # The toolchain's libFuzzer runtime (Tests/fuzz/README.md).
    "libclang_rt", "fuzzer_no_main",
    # hiredis's call for producers written in C (docs/worker.md, "Producing").
    "redisCommandArgv",
    # Python's standard library (Bindings/python/README.md).
    "Queue",
    # Environment variables of the dynamic loader, XDG and cgo (README.md).
    "LD_DEBUG", "XDG_DATA_DIRS", "CGO_",
    # Redis commands and arguments the worker does not send: what producers should (not) use,
    # what Redis does itself, what an earlier worker or a measured alternative used (docs/worker.md).
    "XAUTOCLAIM", "MAXLEN", "XTRIM", "MINID", "ENTRIESREAD", "REPLCONF", "GETACK", "SET", "NX", "EX", "MGET",
}

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FILE_NAME = re.compile(r"^[\w+.-]+\.(swift|h|c|py|sh|go|tsv|md|map|json|txt|toml|mod)$")
PLACEHOLDER = re.compile(r"<[A-Za-z][\w -]*>")
CODE_SUFFIXES = (".swift", ".h", ".c", ".lua", ".modulemap", ".map", ".py", ".sh", ".go", ".tsv", ".toml", ".mod", ".in")
NOT_SOURCE_DIRECTORIES = {".git", "dist", "out"}


def repository_files():
    """The tracked files (every file outside build directories where there is no git)."""
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return [f for f in out.split("\n") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for base, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in NOT_SOURCE_DIRECTORIES and not d.startswith(".build")]
            files += [os.path.relpath(os.path.join(base, n), ROOT) for n in names]
        return files


def words_in(files):
    """Every identifier-shaped word in the code files among `files`."""
    words = set()
    for name in files:
        if not (name.endswith(CODE_SUFFIXES) or os.path.basename(name) == "Makefile"):
            continue
        if name.startswith("scripts/check-"):
            continue  # the checks name missing things on purpose (their self-tests)
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):
            continue  # deleted in the work tree, not yet in the index
        with open(path, encoding="utf-8", errors="replace") as f:
            words.update(IDENTIFIER.findall(f.read()))
    return words


def support_targets():
    """The non-test targets Package.swift keeps under Tests/: name -> directory."""
    with open(os.path.join(ROOT, "Package.swift"), encoding="utf-8") as f:
        package = f.read()
    return dict(re.findall(r'\.target\(name: "(\w+)"[^)]*?path: "(Tests/[^"]+)"', package))


def make_targets():
    with open(os.path.join(ROOT, "Makefile"), encoding="utf-8") as f:
        return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:", f.read(), re.M))


def spans(lines):
    """(line number, span) of each backticked span outside code fences; a span may go on to
    the next line of its paragraph, as Markdown allows (a blank line ends it unclosed)."""
    in_fence = False
    carried = None  # (line number, text) of a span still open at the end of the last line
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_fence, carried = not in_fence, None
            continue
        if in_fence:
            continue
        if carried and line.strip():
            text, prefix, opened = carried[1] + " " + line, len(carried[1]) + 1, carried[0]
        else:
            text, prefix, opened = line, 0, number
        carried = None
        if text.count("`") % 2:
            cut = text.rfind("`")
            carried = (opened if cut < prefix else number, text[cut:])
            text = text[:cut]
        # Spans in the carried part began on the line it was carried from.
        for m in re.finditer(r"`([^`]+)`", text):
            yield (opened if m.start() < prefix else number), m.group(1)


def check(doc, files, basenames, words, targets):
    missing = []
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, span in spans(lines):
        problem = check_span(span.strip(), files, basenames, words, targets)
        if problem:
            missing.append(f"{os.path.relpath(doc, ROOT)}:{number}: `{span}`: {problem}")
    return missing


def is_artefact(path):
    first = path.split("/")[0]
    return first in BUILD_DIRECTORIES or path in BUILD_DIRECTORIES or path in INSTALLED_PATHS or path in WHEEL_PATHS or path in WRITTEN_FILES


def check_span(span, files, basenames, words, targets):
    if not span or span in WRITTEN_FILES:
        return None
    if span.startswith("make "):
        unknown = [t for t in span.split()[1:] if re.match(r"^[a-z][\w-]*$", t) and t not in targets]
        return f"no Makefile target {', '.join(unknown)}" if unknown else None
    # A formula (`d/2..d`, `n × 2`): no word of two letters or more.
    if all(len(w) < 2 for w in IDENTIFIER.findall(span)):
        return None
    # A path in the repository (a glob or a placeholder is matched against every file).
    if "/" in span and " " not in span and not span.startswith("/"):
        if is_artefact(span) or span in EXTERNAL_PATHS:
            return None
        pattern = re.escape(PLACEHOLDER.sub("*", span).rstrip("/")).replace(r"\*", "[^/]*")
        # A path relative to a module (`Generated/Options.swift`) matches its tail.
        if any(re.fullmatch("(.*/)?" + pattern + "(/.*)?", f) for f in files):
            return None
        return "no such path in the repository"
    if FILE_NAME.match(span):
        return None if span in basenames else "no such file in the repository"
    # Header names, flags, shell words, numbers: not code names of ours.
    if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", span) or span.startswith("-") or re.fullmatch(r"[\d.,%x×]+", span):
        return None
    # Flags and their values (`--sanitize=fuzzer`) and placeholders are not names.
    text = PLACEHOLDER.sub(" ", re.sub(r"(^|\s)--?[\w-]+(=\S*)?", " ", span))
    unknown = []
    for word in IDENTIFIER.findall(text):
        if word in NOT_CODE or word in EXTERNAL_NAMES or len(word) < 2 or word in words:
            continue
        # A suffix of a name written beside it (`push_client_send`/`_send_batch`, `_ms`).
        if word.startswith("_") and any(w.endswith(word) for w in words):
            continue
        unknown.append(word)
    return f"not in the code: {', '.join(unknown)}" if unknown else None


def repository():
    """What a document is checked against: the files, their names, the code's words (with the
    target names, the directories of Sources/ and Tests/) and the Makefile's targets."""
    files = repository_files()
    basenames = {os.path.basename(f) for f in files}
    words = words_in(files) | set(os.listdir(os.path.join(ROOT, "Sources"))) | set(os.listdir(os.path.join(ROOT, "Tests")))
    return files, basenames, words, make_targets()


def self_test():
    """The check must be able to fail: a doc citing names that exist passes, one citing a name
    that does not (or a file, a path, a make target) fails with that name; the rule sets let
    through what they list and nothing beside it."""
    import tempfile
    cases = [("`PushClient.send` and `retire()` in `PushClient+Send.swift`, `make test`", 0),
             ("`PushClient.sendEverything`", 1), ("`NoSuchFile.swift`", 1), ("`scripts/no-such.sh`", 1),
             ("`make no-such-target`", 1), ("`withLockWaiting { h, condition in … }`", 1),
             # names from every language of the repository: Python, Go, shell tests
             ("`send_many`, `WaitConnectedContext`, `crash_loop`, `bench_test.go`", 0),
             # a span across two lines of a paragraph is one span, checked as a whole
             ("a `PushClient.send\nretire()` here", 0), ("a `PushClient.send\nsendEverything` here", 1),
             # placeholders, suffixes, formulas, flags
             ("`Tests/fuzz/corpus/<harness>/`, `push_client_send`/`_send_batch`, `d/2..d`, `swift build --sanitize=fuzzer`", 0),
             ("`swiftpush worker <TAB>`", 0), ("`swiftpush zzq<TAB>`", 1), ("`_no_such_suffix_anywhere`", 1),
             ("`Tests/<Module>/NoSuchFile.swift`", 1),
             # the rule sets: exactly what they list
             ("`.build-release/release/libswiftpush.so`, `bin/swiftpush`, `swiftpush.libs/`, `out/status/status-page.png`", 0),
             ("`XTRIM push:{s} MINID <id>`, `deflate_nv`, `lib/nghttp2_hd.c`", 0),
             ("`.build-nosuch/x`", 1), ("`bin/swiftpush-other`", 1), ("`out/status/other.png`", 1),
             ("`lib/nghttp2_other.c`", 1), ("`XNOSUCHCOMMAND`", 1)]
    context = repository()  # read once: the cases differ only in the document
    for text, expected in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(text + "\n")
        got = 1 if check(f.name, *context) else 0
        os.unlink(f.name)
        if got != expected:
            print(f"self-test: {text!r} gave exit {got}, expected {expected}")
            return 1
    print(f"doc names: self-test passed ({len(cases)} cases)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    context = repository()
    files = context[0]
    if sys.argv[1:] == ["--all"]:
        docs = [os.path.join(ROOT, f) for f in files if f.endswith(".md") and os.path.isfile(os.path.join(ROOT, f))]
    else:
        docs = sys.argv[1:] or [os.path.join(ROOT, "docs", "architecture.md")]
    missing = []
    for doc in docs:
        missing += check(doc, *context)
    for m in missing:
        print(m)
    print(f"doc names: {len(missing)} missing in {len(docs)} documents ({', '.join(os.path.relpath(d, ROOT) for d in docs)})")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
