"""Sends one notification through the installed wheel and reports what the process mapped.

usage: python send_and_map.py KEY PORT CA VENV [DEADLINE_MS]   (run from outside the repository;
       CA - for none: the system's trust store)

Prints `key=value` lines for Tests/wheel/run.sh to check:
  package   where swiftpush was imported from (must be under VENV)
  library   the libswiftpush.so the package loaded
  ca_file   the CA file the client was given (with CA -, what swiftpush found, or None)
  result    TAG OUTCOME STATUS of the notification sent to the mock, and reason its reason's text
  vendored  the OpenSSL and nghttp2 files mapped from VENV (the wheel's swiftpush.libs/)
  system    the OpenSSL and nghttp2 files mapped from anywhere else
  python_ssl  which of Python's own modules that load the system's OpenSSL are loaded (_ssl and
            _hashlib: `import swiftpush` imports asyncio, which imports ssl when it can)
"""

import re
import sys

import swiftpush
import swiftpush._ffi as ffi

key, port, ca, venv = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ca = None if ca == "-" else ca
deadline_ms = int(sys.argv[5]) if len(sys.argv) > 5 else None
print("package=" + swiftpush.__file__)
print("library=" + ffi.lib._name)
print(f"ca_file={ca or ffi.system_ca_file()}")
with swiftpush.Client(host="localhost", port=port, ca_file=ca, key_file=key, key_id="TESTKEY001",
                      team_id="TEAM123456", topic="com.example.app", deadline_ms=deadline_ms) as client:
    client.send("00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0",
                {"aps": {"alert": "from the wheel"}}, tag=42)
    client.close(drain=10)
    for r in client.results():
        print(f"result={r.tag} {r.outcome.name} {r.status}")
        print(f"reason={r.reason.text}")

with open("/proc/self/maps") as maps:
    mapped = {line.split()[-1] for line in maps if "/" in line}
tls_http2 = sorted(p for p in mapped if re.match(r"lib(ssl|crypto|nghttp2)[-.]", p.rsplit("/", 1)[-1]))
print("vendored=" + " ".join(p for p in tls_http2 if p.startswith(venv)))
print("system=" + " ".join(p for p in tls_http2 if not p.startswith(venv)))
print("python_ssl=" + " ".join(m for m in ("_ssl", "_hashlib") if m in sys.modules))
