#!/usr/bin/env python3
"""Checks that every module a Swift target imports is one of its declared dependencies in
Package.swift (issue 34 item 5: PushChannels imported CPushSystem without declaring it).

usage: scripts/check-target-imports.py [--self-test]

SwiftPM's `--explicit-target-dependency-import-check error` (in `make test`'s build) let
PushChannels import CPushSystem, which only PushTransport and PushClientCore declared, and test
targets import C modules they never declared (each came with another dependency). The layers in docs/architecture.md are
only as real as the declarations: this check asks for every import of a target of this package
(and of a product of another package) to be declared by the importing target itself.
Prints each undeclared import with its file and line; exits 1 if there is one.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# `.target(name: "X", ...)`, `.executableTarget(`, `.testTarget(`, `.systemLibrary(`, ...: the
# call's name, then everything up to the next target call (its dependencies among it).
TARGET = re.compile(r"\.(target|executableTarget|testTarget|systemLibrary|binaryTarget|plugin|macro)\(\s*name:\s*\"([^\"]+)\"")
QUOTED = re.compile(r"\"([^\"]+)\"")
PRODUCT = re.compile(r"\.product\(\s*name:\s*\"([^\"]+)\"")
# `import X`, `@testable import X`, `internal import X`, `import struct X.Y`, ...
IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
                    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)", re.M)


def parse_package(text):
    """Each target's kind, name and declared dependency names (targets and products)."""
    text = re.sub(r"//[^\n]*", "", text)
    # The dependency array ends at the `products:` of the next call at the latest; slicing the
    # text between two target calls is enough, since a call names only its own dependencies.
    found = list(TARGET.finditer(text))
    targets = {}
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        body = text[m.end():end]
        dep = re.search(r"dependencies:\s*\[", body)
        declared = set()
        if dep:
            depth, j = 1, dep.end()
            while j < len(body) and depth:
                depth += {"[": 1, "]": -1}.get(body[j], 0)
                j += 1
            inner = body[dep.end():j - 1]
            declared = set(PRODUCT.findall(inner)) | set(QUOTED.findall(re.sub(r"\.product\([^)]*\)", "", inner)))
        targets[m.group(2)] = (m.group(1), declared)
    products = set(PRODUCT.findall(text))
    return targets, products


def target_directory(root, kind, name):
    base = "Tests" if kind == "testTarget" else "Sources"
    return os.path.join(root, base, name)


def check(root):
    with open(os.path.join(root, "Package.swift"), encoding="utf-8") as f:
        targets, products = parse_package(f.read())
    problems = []
    for name, (kind, declared) in sorted(targets.items()):
        directory = target_directory(root, kind, name)
        for base, _, files in os.walk(directory):
            for file in sorted(files):
                if not file.endswith(".swift"):
                    continue
                path = os.path.join(base, file)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in IMPORT.finditer(text):
                    module = m.group(1)
                    if module == name or module in declared:
                        continue
                    if module in targets or module in products:
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{os.path.relpath(path, root)}:{line}: {name} imports {module} "
                                        f"without declaring it in Package.swift")
    return problems, len(targets)


def self_test():
    """The check must be able to fail: a package whose target imports a sibling it declares
    passes; one importing an undeclared sibling, or an undeclared product, fails."""
    import tempfile
    package = """// swift-tools-version:6.1
let package = Package(name: "p", targets: [
    .systemLibrary(name: "CLib"),
    .target(name: "Low", dependencies: ["CLib"]),
    .target(name: "High", dependencies: ["Low", .product(name: "Logging", package: "swift-log")]),
    .testTarget(name: "HighTests", dependencies: ["High"]),
])
"""
    cases = [({"Sources/High/A.swift": "import Low\nimport Logging\nimport Glibc\n"}, 0),
             ({"Sources/High/A.swift": "import Low\n@_implementationOnly import CLib\n"}, 1),
             ({"Sources/Low/A.swift": "import Logging\n"}, 1),
             ({"Tests/HighTests/T.swift": "@testable import High\nimport Low\n"}, 1),
             ({"Tests/HighTests/T.swift": "@testable import High\nimport XCTest\n"}, 0)]
    for files, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "Package.swift"), "w") as f:
                f.write(package)
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            problems, _ = check(root)
        if (1 if problems else 0) != expected:
            print(f"self-test: {files!r} gave {problems}, expected exit {expected}")
            return 1
    print(f"target imports: self-test passed ({len(cases)} cases)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems, count = check(ROOT)
    for p in problems:
        print(p)
    print(f"target imports: {len(problems)} undeclared in {count} targets")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
