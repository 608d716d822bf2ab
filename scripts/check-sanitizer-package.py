#!/usr/bin/env python3
"""Tests/sanitizers/Package.swift repeats, for the targets the sanitizer suites build, the
dependencies each has in the main Package.swift (its targets are symbolic links to the main
package's: issue 34, item 6). A dependency added on one side only would build the ASan suites
from a different graph than the main build, or not at all on a fresh machine: this check says
which target differs, and how. Run by `make test-docs`; `--self-test` checks the parser.
"""
import re
import sys


def targets(text):
    """{target name: set of dependency names} for every .target/.testTarget/.executableTarget
    call in a manifest's text (a product dependency counts by its product name)."""
    out = {}
    for m in re.finditer(r'\.(?:target|testTarget|executableTarget)\(\s*name:\s*"([^"]+)"', text):
        # The call's text: up to the parenthesis that closes it.
        depth, i = 0, m.start() + text[m.start():].index("(")
        for j in range(i, len(text)):
            if text[j] == "(":
                depth += 1
            elif text[j] == ")":
                depth -= 1
                if depth == 0:
                    break
        call = text[i:j]
        deps = set()
        d = call.find("dependencies:")
        if d >= 0:
            # The dependency list: the bracket after `dependencies:` to its match.
            k = call.index("[", d)
            depth = 0
            for e in range(k, len(call)):
                if call[e] == "[":
                    depth += 1
                elif call[e] == "]":
                    depth -= 1
                    if depth == 0:
                        break
            deps_text = call[k:e]
            deps |= set(re.findall(r'\.product\(\s*name:\s*"([^"]+)"', deps_text))
            deps |= set(re.findall(r'(?<![:\w])\s*"([^"]+)"(?!\s*,\s*package)', re.sub(r'\.product\([^)]*\)', "", deps_text)))
        out[m.group(1)] = deps
    return out


def compare(main_text, sanitizer_text):
    """The differences, one sentence each."""
    main, san = targets(main_text), targets(sanitizer_text)
    problems = []
    for name, deps in sorted(san.items()):
        if name not in main:
            problems.append(f"{name}: in Tests/sanitizers/Package.swift, not in Package.swift")
        elif deps != main[name]:
            only_main = sorted(main[name] - deps)
            only_san = sorted(deps - main[name])
            problems.append(f"{name}: dependencies differ (only in Package.swift: {only_main}; only in Tests/sanitizers/Package.swift: {only_san})")
    return problems


def self_test():
    main = '''.target(name: "A", dependencies: ["B", .product(name: "Logging", package: "swift-log", condition: tools)]),
              .testTarget(name: "T", dependencies: ["A"]), .target(name: "B")'''
    same = '''.target(name: "A", dependencies: ["B", .product(name: "Logging", package: "swift-log")]), .target(name: "B")'''
    assert compare(main, same) == [], compare(main, same)
    missing = '''.target(name: "A", dependencies: [.product(name: "Logging", package: "swift-log")])'''
    p = compare(main, missing)
    assert len(p) == 1 and "only in Package.swift: ['B']" in p[0], p
    extra = '''.target(name: "Z")'''
    assert "not in Package.swift" in compare(main, extra)[0]
    print("sanitizer package check: self-test passed (3 cases)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    problems = compare(open("Package.swift").read(), open("Tests/sanitizers/Package.swift").read())
    for p in problems:
        print("Tests/sanitizers/Package.swift: " + p)
    n = len(targets(open("Tests/sanitizers/Package.swift").read()))
    print(f"sanitizer package: {len(problems)} differences in {n} targets")
    sys.exit(1 if problems else 0)
