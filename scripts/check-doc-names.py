#!/usr/bin/env python3
"""Checks that a document's code names still exist (issue 25 item 6: docs/architecture.md had
drifted, naming functions that no longer existed).

usage: scripts/check-doc-names.py DOC.md [DOC.md ...]

Every `backticked` span is read as code: a path (`scripts/gen_tables.py`, `Tables/*.tsv`) must
exist in the repository; a file name (`PushClient+Send.swift`) must exist somewhere in it; `make X`
must be a Makefile target; every identifier in the span (`PushClient.send`, `retire()`,
`withLock { h in … }`) must appear as a whole word in Sources/ or scripts/ or be a target's name (a test suite's
name, `…Tests`, in Tests/). Spans that are not code — header names (`apns-id`), shell lines, prose in backticks —
are told apart by their shape, and the few words that are neither are listed in NOT_CODE below.
Prints each name that is missing with its line; exits 1 if any is.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# Words that appear in backticks as prose or as external names the code never spells out.
NOT_CODE = {
    "in", "h", "condition", "public", "package", "make", "true", "false", "nil", "self",
}

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FILE_NAME = re.compile(r"^[\w+.-]+\.(swift|h|c|py|sh|tsv|md|map|json|txt)$")


def repository_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return out.split("\n")


def words_in(directories):
    """Every identifier-shaped word in the text files under `directories`."""
    words = set()
    for directory in directories:
        for base, _, files in os.walk(os.path.join(ROOT, directory)):
            for name in files:
                if not name.endswith((".swift", ".h", ".c", ".lua", ".modulemap", ".map", ".py", ".sh")):
                    continue
                path = os.path.join(base, name)
                if os.path.abspath(path) == os.path.abspath(__file__):
                    continue  # this file names missing things on purpose (the self-test)
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


def check(doc, files, basenames, source_words, test_words, targets):
    missing = []
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    in_fence = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for span in re.findall(r"`([^`]+)`", line):
            problem = check_span(span.strip(), files, basenames, source_words, test_words, targets)
            if problem:
                missing.append(f"{os.path.relpath(doc, ROOT)}:{number}: `{span}`: {problem}")
    return missing


def check_span(span, files, basenames, source_words, test_words, targets):
    if not span:
        return None
    if span.startswith("make "):
        unknown = [t for t in span.split()[1:] if re.match(r"^[a-z][\w-]*$", t) and t not in targets]
        return f"no Makefile target {', '.join(unknown)}" if unknown else None
    # A path in the repository (a glob is matched against every file).
    if "/" in span and " " not in span and not span.startswith("/"):
        pattern = re.escape(span.rstrip("/")).replace(r"\*", "[^/]*")
        # A path relative to a module (`Generated/Options.swift`) matches its tail.
        if any(re.fullmatch("(.*/)?" + pattern + "(/.*)?", f) for f in files):
            return None
        return "no such path in the repository"
    if FILE_NAME.match(span):
        return None if span in basenames else "no such file in the repository"
    # Header names, flags, shell words, numbers: not code names of ours.
    if re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", span) or span.startswith("-") or re.fullmatch(r"[\d.,%x×]+", span):
        return None
    unknown = []
    for word in IDENTIFIER.findall(span):
        if word in NOT_CODE or len(word) < 2:
            continue
        pool = test_words if word.endswith("Tests") else source_words
        if word not in pool:
            unknown.append(word)
    return f"not found in {'Tests' if all(w.endswith('Tests') for w in unknown) else 'Sources'}: {', '.join(unknown)}" if unknown else None


def self_test():
    """The check must be able to fail: a doc citing names that exist passes, one citing a name
    that does not (or a file, a path, a make target) fails with that name."""
    import tempfile
    cases = [("`PushClient.send` and `retire()` in `PushClient+Send.swift`, `make test`", 0),
             ("`PushClient.sendEverything`", 1), ("`NoSuchFile.swift`", 1), ("`scripts/no-such.sh`", 1),
             ("`make no-such-target`", 1), ("`withLockWaiting { h, condition in … }`", 1)]
    for text, expected in cases:
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write(text + "\n")
        got = subprocess.run([sys.executable, __file__, f.name], capture_output=True).returncode
        os.unlink(f.name)
        if got != expected:
            print(f"self-test: {text!r} gave exit {got}, expected {expected}")
            return 1
    print(f"doc names: self-test passed ({len(cases)} cases)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    docs = sys.argv[1:] or [os.path.join(ROOT, "docs", "architecture.md")]
    files = [f for f in repository_files() if f]
    basenames = {os.path.basename(f) for f in files}
    # The code: Sources/, the scripts that generate it, and the target names (Package.swift).
    source_words = words_in(["Sources", "scripts"]) | set(os.listdir(os.path.join(ROOT, "Sources")))
    # Test-support targets kept under Tests/ (`.target(..., path: "Tests/X")` in Package.swift)
    # are code the suites share: their names count as the code's.
    support = support_targets()
    source_words |= words_in(support.values()) | set(support)
    test_words = words_in(["Tests"]) | source_words
    targets = make_targets()
    missing = []
    for doc in docs:
        missing += check(doc, files, basenames, source_words, test_words, targets)
    for m in missing:
        print(m)
    print(f"doc names: {len(missing)} missing in {', '.join(os.path.relpath(d, ROOT) for d in docs)}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
