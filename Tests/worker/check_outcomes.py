#!/usr/bin/env python3
"""Checks a worker run: every notification id of the input has exactly one outcome, with the
expected kind, and the unregistered-token stream holds exactly the 410s.

usage: check_outcomes.py INPUT.jsonl OUTCOMES.jsonl [UNREGISTERED.jsonl GONE_TOKEN,...]
  INPUT.jsonl          what was enqueued (one JSON object per line, each with an "id")
  OUTCOMES.jsonl       `swiftpush outcomes --json`
  UNREGISTERED.jsonl   `swiftpush outcomes --unregistered --json`
  GONE_TOKEN,...       the tokens the mock answers 410 Unregistered for
Prints one summary line; exits 1 with the first problems found.
"""
import collections
import json
import sys


def main():
    inputs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    outcomes = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    gone = set(sys.argv[4].split(",")) if len(sys.argv) > 4 else set()
    problems = []
    by_id = collections.defaultdict(list)
    for o in outcomes:
        by_id[o["id"]].append(o)
    expected_ids = [i["id"] for i in inputs]
    tokens = {i["id"]: i["token"] for i in inputs}
    for nid in expected_ids:
        got = by_id.get(nid, [])
        if len(got) != 1:
            problems.append(f"id {nid}: {len(got)} outcomes")
            continue
        o = got[0]
        if tokens[nid] in gone:
            if (o["outcome"], o["status"], o["reason"]) != ("REJECTED", 410, "Unregistered"):
                problems.append(f"id {nid}: expected REJECTED 410 Unregistered, got {o}")
        elif o["outcome"] != "ACCEPTED":
            problems.append(f"id {nid}: expected ACCEPTED, got {o}")
    extra = set(by_id) - set(expected_ids)
    if extra:
        problems.append(f"{len(extra)} outcomes for ids never enqueued, e.g. {sorted(extra)[:3]}")
    unregistered_count = 0
    if len(sys.argv) > 3:
        rows = [json.loads(line) for line in open(sys.argv[3]) if line.strip()]
        unregistered_count = len(rows)
        got = sorted((r["id"], r["token"]) for r in rows)
        want = sorted((i["id"], i["token"]) for i in inputs if i["token"] in gone)
        if got != want:
            problems.append(f"unregistered stream: {len(got)} rows, expected {len(want)}; "
                            f"first difference {sorted(set(got) ^ set(want))[:3]}")
        if any(int(r["timestamp_ms"]) <= 0 for r in rows):
            problems.append("an unregistered row has no timestamp")
    # attempts counts this life's requests and one per earlier delivery that ended without an
    # outcome (docs/worker.md, "Dead letters"): more than one is a resend or a re-delivery.
    duplicates_sent = sum(1 for o in outcomes if int(o.get("attempts", 1)) > 1)
    print(f"{len(expected_ids)} ids, {len(outcomes)} outcomes, {unregistered_count} unregistered, "
          f"{duplicates_sent} sent more than once or re-delivered")
    if problems:
        for p in problems[:10]:
            print("  " + p)
        sys.exit(1)


if __name__ == "__main__":
    main()
