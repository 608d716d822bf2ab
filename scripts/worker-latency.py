#!/usr/bin/env python3
"""The latency rows of `make bench-worker` (issue 31, item 4): single entries XADDed one at a
time at a steady rate, as an app server enqueues one per chat message, and how long each took
to reach APNs and to have its outcome recorded.

    worker-latency.py REDIS_PORT SHARD RATE SECONDS CONTROL_URL [--lane fast|bulk] [--after-drain]

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
With --after-drain (the fast-lane row: singles beside a backlog that drains), nothing is read
while the backlog drains but the producer's replies and the fast lane's length: the requests'
times (GET /record) and the outcomes' are taken once both streams are empty, so that parsing the
backlog's requests and outcome records in Python does not take CPU the worker's drain needs on
a 2-core machine (it took a core: the bulk rate "beside" the singles was 10-20% lower than
alone, with the singles 0.03% of the work). The warm-up then waits for the fast lane to be
empty, and XADD to outcome is against the outcome record's stream id (Redis's clock, ms:
when the worker recorded it; the singles' records are picked out by a script in Redis).
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


# The outcome records of STREAM (KEYS[1]) from ARGV[1] to ARGV[2] whose `id` starts with ARGV[3]:
# {stream id, id, outcome} each; the rest stays in Redis (--after-drain).
PICK_SINGLES = """
local out = {}
local prefix = ARGV[3]
for _, r in ipairs(redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[2])) do
  local f, id, outcome = r[2], nil, ''
  for i = 1, #f, 2 do
    if f[i] == 'id' then id = f[i + 1] elseif f[i] == 'outcome' then outcome = f[i + 1] end
  end
  if id and string.sub(id, 1, #prefix) == prefix then out[#out + 1] = {r[1], id, outcome} end
end
return out
"""


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
    after_drain = "--after-drain" in sys.argv[6:]
    if lane not in ("fast", "bulk") or (after_drain and lane != "fast"):
        sys.exit("worker-latency: --lane fast or --lane bulk (--after-drain: fast only)")
    stream, outcomes = f"push:{{{shard}}}" + (":fast" if lane == "fast" else ""), f"outcomes:{{{shard}}}"
    producer, watcher = Connection(port), Connection(port)
    sel = selectors.DefaultSelector()
    sel.register(producer.sock, selectors.EVENT_READ, producer)
    last_id = b"0-0"
    if not after_drain:
        sel.register(watcher.sock, selectors.EVENT_READ, watcher)
        watcher.sock.sendall(command("XREAD", "COUNT", 1000, "BLOCK", 0, "STREAMS", outcomes, last_id))

    def ask(*args):
        """One command on the watcher's connection (unused otherwise with --after-drain)."""
        watcher.sock.sendall(command(*args))
        while True:
            got = watcher.replies()
            if got:
                return got[0]

    def wait_empty(keys, limit):
        """Until every stream of `keys` is empty (settled and deleted), at most `limit` s."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if all(ask("XLEN", k) == 0 for k in keys):
                return True
            pump(0.01)
        return False
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
    if after_drain:
        if not wait_empty([stream], 30):
            sys.exit("worker-latency: the warm-up entries were not settled within 30 s (is the worker up?)")
    else:
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
    backlog_left = ""
    if after_drain:
        wait_empty([stream], 20)
        # Every single settled: the window their records are in ends here; what the backlog
        # still holds says the singles went while it drained.
        singles_done_ms = now_us() // 1000 + 1000
        backlog_left = f" backlog_left={ask('XLEN', f'push:{{{shard}}}')}"
    else:
        wait_for(names, 20)
    cpu_end = os.times()
    producer_cpu_pct = 100 * ((cpu_end.user - cpu_start.user) + (cpu_end.system - cpu_start.system)) \
        / max(time.monotonic() - start, 1e-9)

    if after_drain:
        # The backlog drained (both lanes empty), then the singles' outcome records, picked out
        # in Redis from the window they were recorded in: (stream id ms, id, outcome).
        bulk = f"push:{{{shard}}}"
        if not wait_empty([bulk, stream], 600):
            sys.exit("worker-latency: the backlog did not drain within 600 s")
        first_ms = min(sent) // 1000 - 1
        rows = ask("EVAL", PICK_SINGLES, 1, outcomes, f"{first_ms}-0", f"{singles_done_ms}-0", "lat-")
        for rid, name, outcome in rows:
            seen.setdefault(name.decode(), (int(rid.split(b"-")[0]) * 1000, outcome.decode()))
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
          f"producer_cpu_pct={producer_cpu_pct:.1f}{backlog_left}")


if __name__ == "__main__":
    main()
