#!/usr/bin/env python3
"""Checks that docs/architecture.md's module table lists exactly the targets of Package.swift
(issue 34 item 5: the table had lost SwiftPushStatus, SwiftPushWorkerHTTP, the C modules and
every test target).

usage: scripts/check-module-table.py [--self-test] [Package.swift DOC.md]

The targets are the `name:` of every `.target(`, `.executableTarget(`, `.testTarget(`,
`.systemLibrary(`, `.binaryTarget(`, `.plugin(` and `.macro(` call in Package.swift (comments
removed). The table is the first one under the heading "## Modules"; a module is a backticked
name in a row's first cell outside parentheses (`SwiftPushKit` (product `SwiftPushKit`) names
the target once; the product in parentheses is not a target). Prints each target the table
lacks and each name it lists that is no target; exits 1 if there is one.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

TARGET = re.compile(r"\.(?:target|executableTarget|testTarget|systemLibrary|binaryTarget|plugin|macro)\(\s*name:\s*\"([^\"]+)\"")


def package_targets(text):
    return set(TARGET.findall(re.sub(r"//[^\n]*", "", text)))


def table_modules(text):
    """The modules the first table under "## Modules" names, or None when there is none."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("## Modules")), None)
    if start is None:
        return None
    rows, seen_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            seen_table = True
            rows.append(line)
        elif seen_table:
            break
    modules = set()
    for row in rows[2:]:  # the header and its |---| line
        first = row.split("|")[1]
        # Parentheses say what a module is (its product, its installed name): not modules.
        while re.search(r"\([^()]*\)", first):
            first = re.sub(r"\([^()]*\)", "", first)
        modules.update(re.findall(r"`([^`]+)`", first))
    return modules if rows else None


def check(package_text, doc_text):
    targets = package_targets(package_text)
    modules = table_modules(doc_text)
    if modules is None:
        return ["no module table under a \"## Modules\" heading"], targets
    problems = [f"target {t} is not in the module table" for t in sorted(targets - modules)]
    problems += [f"the module table lists {m}, which is no target of Package.swift" for m in sorted(modules - targets)]
    return problems, targets


def self_test():
    """The check must be able to fail: a table listing exactly the targets passes; one missing
    a target (a test target, a system library) or listing a name that is no target fails."""
    package = """let package = Package(name: "p", targets: [
    .systemLibrary(name: "CLib", pkgConfig: "lib"),
    .target(name: "Core", dependencies: ["CLib"]),
    .executableTarget(name: "Tool", dependencies: ["Core"]),
    // .target(name: "Commented"),
    .testTarget(name: "CoreTests", dependencies: ["Core"]),
])
"""
    head = "# Doc\n\n## Modules (Package.swift)\n\n| module | holds |\n|---|---|\n"
    rows = {"CLib": "| `CLib` | a C library |\n", "Core": "| `Core` (product `core`) | the core, `Thing` |\n",
            "Tool": "| `Tool` (product `tool`, installed as `t`) | the tool |\n",
            "CoreTests": "| tests: `CoreTests` | the tests |\n"}
    tail = "\nText with `NotATarget`.\n\n## Next\n\n| `Other` | x |\n"
    cases = [(head + "".join(rows.values()) + tail, 0),
             (head + "".join(v for k, v in rows.items() if k != "CoreTests") + tail, 1),
             (head + "".join(v for k, v in rows.items() if k != "CLib") + tail, 1),
             (head + "".join(rows.values()) + "| `Gone` | a removed target |\n" + tail, 1),
             ("# Doc\n\nNo table.\n", 1)]
    for doc, expected in cases:
        problems, _ = check(package, doc)
        if (1 if problems else 0) != expected:
            print(f"self-test: {doc!r} gave {problems}, expected exit {expected}")
            return 1
    print(f"module table: self-test passed ({len(cases)} cases)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    package, doc = sys.argv[1:3] if len(sys.argv) == 3 else (os.path.join(ROOT, "Package.swift"),
                                                             os.path.join(ROOT, "docs", "architecture.md"))
    with open(package, encoding="utf-8") as f:
        package_text = f.read()
    with open(doc, encoding="utf-8") as f:
        doc_text = f.read()
    problems, targets = check(package_text, doc_text)
    for p in problems:
        print(f"{os.path.relpath(doc, ROOT)}: {p}")
    print(f"module table: {len(problems)} problems, {len(targets)} targets in {os.path.relpath(package, ROOT)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
