#!/usr/bin/env python3
"""Throughput of the batched path (send_many + poll) from one Python thread.

    bench.py --port PORT --ca ca.pem --key AuthKey.p8 [--count 200000] [--window 20000]
             [--key-id TESTKEY001 --team-id TEAM123456 --topic com.example.app] [--profile]

Keeps at most --window notifications outstanding (well under queue_capacity, so send_many
never waits), sends them BATCH_SIZE at a time and polls between batches, like
Bindings/c/examples/load.c. Last line (machine-readable):
    python-bench count=N accepted=N seconds=S rate=R cpu_us_per_notification=C
"""

import argparse
import resource
import sys
import time

import swiftpush

TOKEN = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"


def payload(size: int) -> bytes:
    head = '{"aps":{"alert":"Hello from swiftpush"},"pad":"'
    return (head + "x" * max(0, size - len(head) - 2) + '"}').encode()


def cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run(args: argparse.Namespace) -> int:
    client = swiftpush.Client(host=args.host, port=args.port, ca_file=args.ca, key_file=args.key, key_id=args.key_id,
                              team_id=args.team_id, topic=args.topic, queue_capacity=args.window + 2 * swiftpush.BATCH_SIZE)
    client.wait_connected(10)
    body = payload(args.payload_bytes)
    items = [(TOKEN, body)] * swiftpush.BATCH_SIZE
    count, window = args.count, args.window
    sent = done = accepted = 0
    start, cpu_start = time.perf_counter(), cpu()
    while done < count:
        if sent < count and sent - done < window:
            n = min(swiftpush.BATCH_SIZE, count - sent, window - (sent - done))
            sent += len(client.send_many(items[:n]))
        results = client.poll(4096, 0.1 if sent >= count or sent - done >= window else 0)
        done += len(results)
        accepted += sum(1 for r in results if r.outcome is swiftpush.Outcome.ACCEPTED)
    seconds, cpu_used = time.perf_counter() - start, cpu() - cpu_start
    client.close()
    print(f"python-bench count={count} accepted={accepted} seconds={seconds:.3f} rate={count / seconds:.0f} "
          f"cpu_us_per_notification={cpu_used * 1e6 / count:.2f}")
    return 0 if accepted == count else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="localhost")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--key-id", default="TESTKEY001")
    p.add_argument("--team-id", default="TEAM123456")
    p.add_argument("--topic", default="com.example.app")
    p.add_argument("--count", type=int, default=200000)
    p.add_argument("--window", type=int, default=20000)
    p.add_argument("--payload-bytes", type=int, default=200)
    p.add_argument("--profile", action="store_true", help="print a cProfile summary")
    args = p.parse_args()
    if args.profile:
        import cProfile
        import pstats
        prof = cProfile.Profile()
        rc = prof.runcall(run, args)
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(12)
        return rc
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
