"""The status page in a real browser (Debian's headless Chromium, over the DevTools pipe).

usage: browser_check.py CHROMIUM URL REDIS_PORT OUT_DIR TOKENS_FILE LIVE_FLAG
  Loads URL (a worker's page), waits until the live data has been rendered several times and
  the rate chart has a line, then stops the load that Tests/status/run.sh keeps running (it
  removes LIVE_FLAG, a file), waits for two more views, and compares the numbers in the DOM
  with what Redis holds (read here, over RESP). Checks that no full device token (TOKENS_FILE,
  one a line) is anywhere in the DOM, that the page fetched nothing but its own origin, that
  the console shows no error, and that an unknown campaign or shard is an empty view. Saves
  OUT_DIR/status-page.png (the whole page). Prints one line per check; exits 1 if any failed.
"""
import json
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from cdp import Browser  # noqa: E402

chromium, url, redis_port, out_dir, tokens_file, live_flag = sys.argv[1:7]
failures = 0


def report(ok, name, detail=""):
    global failures
    print(("ok: " if ok else "FAILED: ") + name + ("" if ok or not detail else f" ({detail})"))
    failures += 0 if ok else 1


def redis(*args):
    """One command over RESP; the reply as Python values."""
    with socket.create_connection(("127.0.0.1", int(redis_port)), timeout=5) as s:
        s.sendall(b"".join([f"*{len(args)}\r\n".encode()] + [f"${len(str(a).encode())}\r\n{a}\r\n".encode() for a in args]))
        f = s.makefile("rb")

        def parse():
            line = f.readline()[:-2]
            kind, rest = line[:1], line[1:]
            if kind in (b"+", b"-"):
                return rest.decode()
            if kind == b":":
                return int(rest)
            if kind == b"$":
                n = int(rest)
                if n < 0:
                    return None
                data = f.read(n + 2)[:-2]
                return data.decode()
            if kind == b"*":
                n = int(rest)
                return None if n < 0 else [parse() for _ in range(n)]
            raise ValueError(line)
        return parse()


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def redis_figures():
    """What the page should show, computed from Redis independently of the reader."""
    shards = sorted(k[len("push:{"):-1] for k in redis("KEYS", "push:{*}") if k.endswith("}") and redis("TYPE", k) == "stream")
    fig = {"shards": {}, "pending": 0, "waiting": 0, "delayed": 0, "unregistered": 0,
           "accepted": 0, "rejected": 0, "failed": 0, "reasons": {}, "campaigns": {}, "consumers": set()}
    for s in shards:
        groups = [pairs(g) for g in redis("XINFO", "GROUPS", f"push:{{{s}}}")]
        g = next((g for g in groups if g["name"] == "senders"), None)
        pending, lag = (g["pending"], g["lag"]) if g else (0, redis("XLEN", f"push:{{{s}}}"))
        delayed = redis("ZCARD", f"delayed:{{{s}}}")
        gone = redis("XLEN", f"unregistered:{{{s}}}")
        fig["shards"][s] = {"waiting": lag, "pending": pending, "delayed": delayed, "unregistered": gone}
        fig["pending"] += pending
        fig["waiting"] += lag
        fig["delayed"] += delayed
        fig["unregistered"] += gone
        if g:
            fig["consumers"] |= {pairs(c)["name"] for c in redis("XINFO", "CONSUMERS", f"push:{{{s}}}", "senders")}
        stats = {k: int(v) for k, v in pairs(redis("HGETALL", f"stats:{{{s}}}")).items()}
        for kind in ("accepted", "rejected", "failed"):
            fig[kind] += stats.get(kind, 0)
        for k, v in stats.items():
            if k.startswith("reason:"):
                fig["reasons"][k[7:]] = fig["reasons"].get(k[7:], 0) + v
            if k.startswith("campaign:") and k.count(":") == 2:
                _, name, kind = k.split(":")
                c = fig["campaigns"].setdefault(name, {"enqueued": 0, "accepted": 0, "rejected": 0, "failed": 0})
                c[kind] = c.get(kind, 0) + v
    return fig


DOM = """(() => {
  const v = id => document.getElementById(id).dataset.value;
  const rows = (table, attr) => Object.fromEntries([...document.querySelectorAll(`#${table} tbody tr[data-${attr}]`)].map(
      r => [r.dataset[attr], [...r.cells].map(c => c.dataset.value === undefined ? c.textContent : c.dataset.value)]));
  return {
    reads: Number(document.body.dataset.reads),
    tiles: Object.fromEntries(["waiting", "pending", "delayed", "unregistered", "accepted", "rejected", "failed"].map(k => [k, v("tile-" + k)])),
    done: v("fleet-done"), total: v("fleet-total"), unit: document.getElementById("fleet-unit").textContent,
    reasons: Object.fromEntries([...document.querySelectorAll("#reasons .reason")].map(r => [r.dataset.reason, r.querySelector(".n").dataset.value])),
    shards: rows("shards", "shard"), campaigns: rows("campaigns", "campaign"), workers: rows("workers", "worker"),
    staleWorkers: [...document.querySelectorAll("#workers td.stale")].map(td => td.parentElement.dataset.worker),
    thisOutcomes: rows("this-outcomes", "outcome"),
    gone: [...document.querySelectorAll("#gone code")].map(c => c.textContent),
    chartPoints: (document.getElementById("chart-line")?.getAttribute("points") || "").split(" ").filter(x => x).length,
    error: document.getElementById("error").style.display !== "none" ? document.getElementById("error").textContent : null,
    live: document.getElementById("live").className,
    html: document.documentElement.outerHTML,
  };
})()"""

profile = tempfile.mkdtemp(prefix="swiftpush-chromium-")
browser = Browser(chromium, profile)
try:
    browser.call("Page.navigate", url=url)
    moving = browser.wait_for("""(() => { const l = document.getElementById("chart-line");
        const rate = document.querySelector('#shards tr[data-shard="counted"]')?.cells[6].dataset.value;
        return Number(document.body.dataset.reads) >= 4 && l && l.getAttribute("points").split(" ").length >= 3
          && Number(rate) > 0; })()""", 60)
    report(bool(moving), "the page renders the live data: several views, a rate chart with a line, the counted shard's rate above 0")
    # Stop the load; two more views later Redis and the page hold the same figures.
    os.remove(live_flag)
    reads = browser.evaluate("Number(document.body.dataset.reads)")
    browser.wait_for(f"Number(document.body.dataset.reads) >= {reads + 2}", 30)
    dom = browser.evaluate(DOM)
    fig = redis_figures()

    tiles = {k: (int(x) if x else None) for k, x in dom["tiles"].items()}
    expected = {k: fig[k] for k in ("waiting", "pending", "delayed", "unregistered", "accepted", "rejected", "failed")}
    report(tiles == expected, "the tiles (waiting, in flight, delayed, 410s, accepted, rejected, failed) are Redis's sums", f"{tiles} != {expected}")
    reasons = {k: int(x) for k, x in dom["reasons"].items()}
    report(reasons == fig["reasons"], "the reasons are the counted shards' reason:<R> sums", f"{reasons} != {fig['reasons']}")
    shard_ok = all(
        s in dom["shards"] and [int(x) for x in (dom["shards"][s][1], dom["shards"][s][2], dom["shards"][s][3], dom["shards"][s][8])]
        == [f["waiting"], f["pending"], f["delayed"], f["unregistered"]] for s, f in fig["shards"].items())
    report(shard_ok and set(dom["shards"]) == set(fig["shards"]), "each shard's row: waiting, in flight, delayed, 410s as Redis holds them",
           f"{ {s: r[1:4] + [r[8]] for s, r in dom['shards'].items()} } vs {fig['shards']}")
    camp_ok = all(c in dom["campaigns"] and int(dom["campaigns"][c][2]) == f["accepted"] + f["rejected"] + f["failed"]
                  and int(dom["campaigns"][c][3]) == f["enqueued"] for c, f in fig["campaigns"].items())
    report(camp_ok and set(dom["campaigns"]) == set(fig["campaigns"]), "each campaign's row: done and enqueued as counted",
           f"{dom['campaigns']} vs {fig['campaigns']}")
    report(fig["consumers"] <= set(dom["workers"]) and "hb-fresh" in dom["workers"] and dom["staleWorkers"] == ["hb-stale"],
           "every consumer of the group and every heartbeat is listed; only the old heartbeat is stale",
           f"{sorted(dom['workers'])}, stale {dom['staleWorkers']}")
    outcomes = {}
    for e in redis("XRANGE", "outcomes:{w}", "-", "+"):
        f = pairs(e[1])
        key = f"{f['app']}/{f['outcome']}/{f['reason']}"
        outcomes[key] = outcomes.get(key, 0) + 1
    mine = {k: int(r[3]) for k, r in dom["thisOutcomes"].items()}
    report(mine == outcomes, "this worker's outcomes by app, outcome and reason are its outcomes stream's", f"{mine} != {outcomes}")
    tokens = [t.strip() for t in open(tokens_file) if t.strip()]
    report(dom["gone"] and all("…" in t for t in dom["gone"]) and not any(t in dom["html"] for t in tokens),
           "410 tokens are shown shortened, and no full token is anywhere in the page", str(dom["gone"]))
    report(dom["error"] is None and dom["live"] == "on", "no error banner; the live feed is connected")
    origin = url.split("/", 3)[:3]
    requested = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    foreign = [u for u in requested if not u.startswith("/".join(origin)) and not u.startswith("data:")]
    report(requested and not foreign, "the page fetched nothing but its own origin", f"{foreign}")
    errors = [e for e in browser.events if e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error"]
    report(not errors, "the console shows no error", json.dumps([e["params"]["entry"].get("text") for e in errors]))
    os.makedirs(out_dir, exist_ok=True)
    png = os.path.join(out_dir, "status-page.png")
    browser.screenshot(png)
    report(os.path.getsize(png) > 10_000, f"screenshot saved: {png}")

    base = url.split("?")[0].rstrip("/")
    browser.call("Page.navigate", url=base + "/?campaign=nope")
    empty = browser.wait_for("""(() => Number(document.body.dataset.reads) >= 2 && {
        scope: document.getElementById("scope").textContent, done: document.getElementById("fleet-done").dataset.value,
        error: document.getElementById("error").style.display, rows: document.querySelectorAll("#campaigns tbody tr[data-campaign]").length})()""", 30)
    report(bool(empty) and empty["scope"] == "campaign nope" and empty["done"] == "0" and empty["error"] == "none" and empty["rows"] == 1,
           "an unknown campaign is an empty view (zeros), not an error page", str(empty))
    browser.call("Page.navigate", url=base + "/?shards=zz")
    empty = browser.wait_for("""(() => Number(document.body.dataset.reads) >= 2 && {
        rows: [...document.querySelectorAll("#shards tbody tr[data-shard]")].map(r => r.cells[0].textContent),
        error: document.getElementById("error").style.display, pending: document.getElementById("tile-pending").dataset.value})()""", 30)
    report(bool(empty) and empty["rows"] == ["zz (empty)"] and empty["error"] == "none" and empty["pending"] == "0",
           "an unknown shard is an empty view, not an error page", str(empty))
finally:
    browser.close()
sys.exit(1 if failures else 0)
