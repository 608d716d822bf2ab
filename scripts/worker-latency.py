#!/usr/bin/env python3
"""The latency rows of `make bench-worker` (issue 31, item 4): single entries XADDed one at a
time at a steady rate, as an app server enqueues one per chat message, and how long each took
to reach APNs and to have its outcome recorded.

    worker-latency.py REDIS_PORT SHARD RATE SECONDS CONTROL_URL [--lane fast|bulk]

A worker must be serving push:{SHARD} (app "bench", outcome_format 1) against a mock started
with --record, whose control interface is CONTROL_URL. `--lane fast` XADDs to the shard's
fast lane, push:{SHARD}:fast (docs/worker.md, "The fast lane"; the fast-lane row of
`make bench-worker` measures it while a bulk backlog drains). Twenty entries go first (the worker's
APNs connection opened, its loop warm) and the mock's record is reset; then RATE entries a
second for SECONDS, each XADD sent at its time on the schedule (open loop: a late one does not
delay the next). Two clocks, both this machine's CLOCK_REALTIME, neither the worker's:
- XADD to request: the producer's clock just before the XADD is written, against the time the
  mock processed the request (`received_us` of GET /record; the entry's number is in its
  device token);
- XADD to outcome: against the time this script read the outcome from outcomes:{SHARD} (an
  `XREAD BLOCK` on a second connection, as a producer waiting for its outcome would).
Prints one line:
  latency rate=R sent=N achieved_rate=A request_p50_ms= request_p99_ms= request_max_ms=
          outcome_p50_ms= outcome_p99_ms= outcome_max_ms= missing_requests= missing_outcomes= not_accepted=
Only the standard library (CI installs no Python packages for it).
"""
import json
import math
import os
import selectors
import socket
import sys
import time
import urllib.request

WARMUP = 20
PAYLOAD = json.dumps({"aps": {"alert": "Hello from swiftpush"}, "pad": "x" * 120})


class Incomplete(Exception):
    pass


def parse(buf, pos):
    """One RESP2 value of buf at pos: (value, next position); Incomplete if not all there."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete
    kind, line = buf[pos:pos + 1], bytes(buf[pos + 1:end])
    pos = end + 2
    if kind in (b"+", b"-"):
        if kind == b"-":
            raise RuntimeError("Redis: " + line.decode())
        return line.decode(), pos
    if kind == b":":
        return int(line), pos
    if kind == b"$":
        n = int(line)
        if n < 0:
            return None, pos
        if len(buf) < pos + n + 2:
            raise Incomplete
        return bytes(buf[pos:pos + n]), pos + n + 2
    if kind == b"*":
        n = int(line)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            v, pos = parse(buf, pos)
            items.append(v)
        return items, pos
    raise RuntimeError(f"unexpected RESP type {kind!r}")


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Connection:
    """A Redis connection whose replies are taken as they arrive (non-blocking reads)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def replies(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise RuntimeError("Redis closed the connection")
        self.buf += data
        out, pos = [], 0
        while True:
            try:
                v, pos = parse(self.buf, pos)
            except Incomplete:
                break
            out.append(v)
        del self.buf[:pos]
        return out


def now_us():
    return time.time_ns() // 1000


def percentile(values, p):
    """Nearest rank: the smallest value with at least p% of them at or below it."""
    if not values:
        return float("nan")
    v = sorted(values)
    return v[max(0, min(len(v) - 1, math.ceil(p / 100 * len(v)) - 1))]


def main():
    port, shard, rate, seconds, control = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    lane = sys.argv[7] if len(sys.argv) > 7 and sys.argv[6] == "--lane" else "bulk"
    if lane not in ("fast", "bulk"):
        sys.exit("worker-latency: --lane fast or --lane bulk")
    stream, outcomes = f"push:{{{shard}}}" + (":fast" if lane == "fast" else ""), f"outcomes:{{{shard}}}"
    producer, watcher = Connection(port), Connection(port)
    sel = selectors.DefaultSelector()
    sel.register(producer.sock, selectors.EVENT_READ, producer)
    sel.register(watcher.sock, selectors.EVENT_READ, watcher)
    last_id = b"0-0"
    watcher.sock.sendall(command("XREAD", "COUNT", 1000, "BLOCK", 0, "STREAMS", outcomes, last_id))
    seen = {}          # id -> (time read, outcome)
    acked = 0

    def pump(timeout):
        nonlocal last_id, acked
        for key, _ in sel.select(timeout):
            conn = key.data
            for reply in conn.replies():
                if conn is producer:
                    acked += 1
                    continue
                for _, entries in reply or []:
                    t = now_us()
                    for entry_id, fields in entries:
                        last_id = entry_id
                        f = dict(zip(fields[::2], fields[1::2]))
                        if b"id" in f:  # a single entry's outcome (a backlog's records have none)
                            seen.setdefault(f[b"id"].decode(), (t, f.get(b"outcome", b"").decode()))
                watcher.sock.sendall(command("XREAD", "COUNT", 1000, "BLOCK", 0, "STREAMS", outcomes, last_id))

    def xadd(name, token):
        producer.sock.sendall(command("XADD", stream, "*", "id", name, "app", "bench", "token", token, "payload", PAYLOAD))

    def wait_for(names, limit):
        end = time.monotonic() + limit
        while any(n not in seen for n in names) and time.monotonic() < end:
            pump(0.05)

    warm = [f"warm-{k}" for k in range(WARMUP)]
    for k, name in enumerate(warm):
        xadd(name, "dd%062x" % k)
        pump(0.01)
    wait_for(warm, 30)
    if any(n not in seen for n in warm):
        sys.exit("worker-latency: the warm-up entries got no outcome within 30 s (is the worker up?)")
    urllib.request.urlopen(urllib.request.Request(control + "/record/reset", method="POST"), timeout=10).read()

    n = int(rate * seconds)
    names = [f"lat-{k}" for k in range(n)]
    # The producer's own CPU over the timed part: on a 2-core machine it shares the cores with
    # Redis, the worker and the mock, and what it takes is part of why a high rate waits.
    cpu_start = os.times()
    sent = [0] * n
    start = time.monotonic()
    for k in range(n):
        due = start + k / rate
        while True:
            wait = due - time.monotonic()
            if wait <= 0:
                break
            pump(wait)
        sent[k] = now_us()
        xadd(names[k], "ee%062x" % k)
    elapsed = time.monotonic() - start
    wait_for(names, 20)
    cpu_end = os.times()
    producer_cpu_pct = 100 * ((cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system)) \
        / max(time.monotonic() - start, 1e-9)

    with urllib.request.urlopen(control + "/record", timeout=30) as r:
        record = json.load(r)
    arrived = {}
    for rec in record:
        token = rec.get("device_token", "")
        if token.startswith("ee"):
            arrived.setdefault(int(token[2:], 16), rec["received_us"])
    to_request = [(arrived[k] - sent[k]) / 1000 for k in range(n) if k in arrived]
    to_outcome = [(seen[names[k]][0] - sent[k]) / 1000 for k in range(n) if names[k] in seen]
    not_accepted = sum(1 for k in range(n) if names[k] in seen and seen[names[k]][1] != "ACCEPTED")
    print(f"latency rate={rate:g} sent={n} achieved_rate={n / max(elapsed, 1e-9):.0f} "
          f"request_p50_ms={percentile(to_request, 50):.3f} request_p99_ms={percentile(to_request, 99):.3f} "
          f"request_max_ms={max(to_request, default=float('nan')):.3f} "
          f"outcome_p50_ms={percentile(to_outcome, 50):.3f} outcome_p99_ms={percentile(to_outcome, 99):.3f} "
          f"outcome_max_ms={max(to_outcome, default=float('nan')):.3f} "
          f"missing_requests={n - len(to_request)} missing_outcomes={n - len(to_outcome)} not_accepted={not_accepted} "
          f"producer_cpu_pct={producer_cpu_pct:.1f}")


if __name__ == "__main__":
    main()
