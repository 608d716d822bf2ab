#!/usr/bin/env python3
"""Checks that the client's and the worker's machines cannot reach OpenSSL, nghttp2 or the
transport, nor the worker's the Redis client or the APNs client (issue 34).

usage: scripts/check-pure-targets.py [--self-test]

`PushClientMachine` holds every decision of the client's I/O thread (`ClientCore`,
`ConnectionState`, ...): events in, actions out, no I/O. Its purity is kept by what it may
depend on: neither it nor anything under it (PushCore, CSwiftPushABI) may declare OpenSSL
(`COpenSSL`, and `PushCrypto`, which wraps it), nghttp2 (`CNGHTTP2`) or the transport
(`PushTransport`). SwiftPM's `--explicit-target-dependency-import-check error` (`make test`'s
build) then refuses an `import CNGHTTP2` in a machine file, since the module is not in the
target's dependency closure; this check refuses the declaration that would let it in. Each
forbidden module is reported with the chain of dependencies that reaches it; a pure target
missing from Package.swift is an error too, so that a rename cannot make the check pass.

`SwiftPushWorkerMachine` (`ShardMachine` and its values) is pure the same way, and may not reach
more (`EXTRA`): hiredis and the Redis client (the wire format is `SwiftPushWorkerRedis`'s), the
APNs client and the Swift API over it (the driver, `SwiftPushWorker`, is their user).
"""
import importlib.util
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# The pure targets, and what none of them may reach.
PURE = ["PushClientMachine", "PushCore", "SwiftPushWorkerMachine"]
FORBIDDEN = {"COpenSSL", "CNGHTTP2", "PushTransport", "PushCrypto"}
# What some pure targets may not reach besides.
EXTRA = {"SwiftPushWorkerMachine": {"CHiredis", "SwiftPushRedis", "PushClientCore", "SwiftPushKit"}}


def _imports_checker():
    """scripts/check-target-imports.py, for its Package.swift reader."""
    spec = importlib.util.spec_from_file_location(
        "check_target_imports", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-target-imports.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


IMPORT = re.compile(r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
                    r"(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)", re.M)


def check(root, pure=PURE, forbidden=FORBIDDEN, extra=EXTRA):
    reader = _imports_checker()
    with open(os.path.join(root, "Package.swift"), encoding="utf-8") as f:
        targets, _ = reader.parse_package(f.read())
    problems = []
    common = forbidden
    for name in pure:
        forbidden = common | extra.get(name, set())
        if name not in targets:
            problems.append(f"Package.swift: the pure target {name} is missing")
            continue
        # Breadth-first over declared dependencies, keeping the chain that reached each.
        chains, queue = {name: [name]}, [name]
        while queue:
            current = queue.pop(0)
            for dep in sorted(targets.get(current, ("", set()))[1]):
                if dep in chains:
                    continue
                chains[dep] = chains[current] + [dep]
                if dep in forbidden:
                    problems.append(f"Package.swift: {name} reaches {dep} ({' -> '.join(chains[dep])})")
                elif dep in targets:
                    queue.append(dep)
        kind = targets[name][0]
        directory = os.path.join(root, "Tests" if kind == "testTarget" else "Sources", name)
        for base, _, files in os.walk(directory):
            for file in sorted(f for f in files if f.endswith(".swift")):
                path = os.path.join(base, file)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for m in IMPORT.finditer(text):
                    if m.group(1) in forbidden:
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{os.path.relpath(path, root)}:{line}: {name} imports {m.group(1)}")
    return problems


def self_test():
    """The check must be able to fail: a machine on a pure core passes; one declaring nghttp2,
    one reaching OpenSSL through its core, one importing the transport, one declaring a module
    only it may not reach (`EXTRA`), and a package without the machine fail; the core may
    declare that module."""
    import tempfile
    def package(core_deps, machine_deps, machine_name="Machine"):
        return f"""// swift-tools-version:6.1
let package = Package(name: "p", targets: [
    .systemLibrary(name: "COpenSSL"),
    .systemLibrary(name: "CNGHTTP2"),
    .systemLibrary(name: "CRedis"),
    .target(name: "Core", dependencies: {core_deps}),
    .target(name: "Transport", dependencies: ["Core", "COpenSSL", "CNGHTTP2"]),
    .target(name: "{machine_name}", dependencies: {machine_deps}),
    .target(name: "Driver", dependencies: ["{machine_name}", "Transport"]),
])
"""
    cases = [(package('[]', '["Core"]'), {}, 0),
             (package('[]', '["Core", "CNGHTTP2"]'), {}, 1),
             (package('["COpenSSL"]', '["Core"]'), {}, 1),
             (package('[]', '["Core"]'), {"Sources/Machine/A.swift": "import Core\nimport Transport\n"}, 1),
             (package('[]', '["Core"]', machine_name="Renamed"), {}, 1),
             (package('[]', '["Core", "CRedis"]'), {}, 1),
             (package('["CRedis"]', '["Core"]'), {}, 1),
             (package('[]', '["Core"]'), {"Sources/Core/A.swift": "import CRedis\n"}, 0)]
    forbidden = {"COpenSSL", "CNGHTTP2", "Transport"}
    for text, files, expected in cases:
        with tempfile.TemporaryDirectory() as root:
            with open(os.path.join(root, "Package.swift"), "w") as f:
                f.write(text)
            for path, body in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(body)
            problems = check(root, pure=["Machine", "Core"], forbidden=forbidden, extra={"Machine": {"CRedis"}})
        if (1 if problems else 0) != expected:
            print(f"self-test: {text!r} {files!r} gave {problems}, expected exit {expected}")
            return 1
    print(f"pure targets: self-test passed ({len(cases)} cases)")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = check(ROOT)
    for p in problems:
        print(p)
    print(f"pure targets: {len(problems)} problems in {', '.join(PURE)} (none may reach {', '.join(sorted(FORBIDDEN))}; "
          + "; ".join(f"{name} nor {', '.join(sorted(more))}" for name, more in EXTRA.items()) + ")")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
