#!/usr/bin/env python3
"""Checks a worker run of multicast entries: every (entry id, token) has exactly one outcome,
the accepted ones counted in groups, the gone tokens REJECTED 410 one by one, and the
unregistered-token stream holds exactly the gone tokens, one row each.

usage: check_multicast.py TOKENS.txt PER_ENTRY ID OUTCOMES.jsonl UNREGISTERED.jsonl GONE_TOKEN,...
  TOKENS.txt           the tokens enqueued, one per line, in order (`swiftpush enqueue --tokens`)
  PER_ENTRY            tokens per entry; entry k (from 0) has id ID#k (or ID alone for one entry)
  OUTCOMES.jsonl       `swiftpush outcomes --json`
  UNREGISTERED.jsonl   `swiftpush outcomes --unregistered --json`
Prints one summary line; exits 1 with the first problems found.
"""
import json
import sys


def positions(text):
    out = []
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        out += range(int(first), int(last or first) + 1)
    return out


def main():
    tokens = [t.strip() for t in open(sys.argv[1]) if t.strip()]
    per_entry, base = int(sys.argv[2]), sys.argv[3]
    outcomes = [json.loads(line) for line in open(sys.argv[4]) if line.strip()]
    unregistered = [json.loads(line) for line in open(sys.argv[5]) if line.strip()]
    gone = set(sys.argv[6].split(",")) if len(sys.argv) > 6 and sys.argv[6] else set()
    chunks = [tokens[i:i + per_entry] for i in range(0, len(tokens), per_entry)]
    ids = [base] if len(chunks) == 1 else [f"{base}#{k}" for k in range(len(chunks))]
    expected = {(nid, p): t for nid, chunk in zip(ids, chunks) for p, t in enumerate(chunk)}
    seen, problems = {}, []
    for o in outcomes:
        at = positions(o["indexes"]) if "indexes" in o else [o.get("index", 0)]
        if len(at) != o.get("count", 1):
            problems.append(f"{o['id']}: count {o.get('count')} for {len(at)} positions")
        for p in at:
            key = (o["id"], p)
            if key not in expected:
                problems.append(f"outcome for {key}, never enqueued")
            elif key in seen:
                problems.append(f"{key}: a second outcome ({seen[key]['outcome']}, then {o['outcome']})")
            seen[key] = o
            want = ("REJECTED", 410, "Unregistered") if expected.get(key) in gone else ("ACCEPTED", 200, "")
            if (o["outcome"], o["status"], o["reason"]) != want:
                problems.append(f"{key}: expected {want}, got {o}")
            if expected.get(key) in gone and o.get("token") != expected[key]:
                problems.append(f"{key}: the 410's token is {o.get('token')}, expected {expected[key]}")
    missing = set(expected) - set(seen)
    if missing:
        problems.append(f"{len(missing)} notifications without an outcome, e.g. {sorted(missing)[:3]}")
    got = sorted((r["id"], r["token"]) for r in unregistered)
    want = sorted((nid, t) for (nid, _), t in expected.items() if t in gone)
    if got != want:
        problems.append(f"unregistered stream: {got[:5]}, expected {want[:5]}")
    print(f"{len(expected)} notifications in {len(ids)} entries, {len(seen)} with an outcome, "
          f"{len(outcomes)} outcome lines, {len(unregistered)} unregistered")
    if problems:
        for p in problems[:10]:
            print("  " + p)
        sys.exit(1)


main()
