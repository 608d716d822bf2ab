"""The status page in a real browser (Debian's headless Chromium, over the DevTools pipe).

usage: browser_check.py CHROMIUM URL REDIS_PORT OUT_DIR TOKENS_FILE LIVE_FLAG CLOCK_OFFSET_FILE
  Loads URL (a worker's page), checks its first paint (the progress bar drawn at its width, no
  transition toward it), waits until the live data has been rendered several times and the rate
  chart has a line and the campaign's row its rate, then stops the load that
  Tests/status/run.sh keeps running (it removes LIVE_FLAG, a file), waits for two more views,
  and compares the numbers in the DOM with what Redis holds (read here, over RESP), each in its
  unit (notifications; Redis's queue in entries). Checks that no full device token
  (TOKENS_FILE, one a line) is anywhere in the DOM, that the page fetched nothing but its own
  origin, that the console shows no error, and that an unknown campaign or shard says it is
  unknown and names the known ones. Last, moves the worker's status clock 30 s forward
  (CLOCK_OFFSET_FILE: a pause in the reads, without waiting for one) and checks that the first
  view after it shows no rate and the chart a gap, not a line across it. Saves
  OUT_DIR/status-page.png (the whole page). Prints one line per check; exits 1 if any failed.
"""
import json
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from cdp import Browser  # noqa: E402

chromium, url, redis_port, out_dir, tokens_file, live_flag, clock_file = sys.argv[1:8]
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
    fig = {"shards": {}, "pending": 0, "waiting": 0, "delayed": 0, "unregistered": 0, "waiting_notifications": 0,
           "accepted": 0, "rejected": 0, "failed": 0, "reasons": {}, "campaigns": {}, "consumers": set()}
    now = sum(int(x) * m for x, m in zip(redis("TIME"), (1000, 0.001)))
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
        if stats:
            # Notifications waiting: enqueued, less settled, less what fresh heartbeats hold.
            beats = [json.loads(v) for v in pairs(redis("HGETALL", f"workers:{{{s}}}")).values()]
            held = sum(b.get("in_flight", 0) for b in beats if now - b.get("heartbeat_ms", 0) <= 10_000)
            fig["waiting_notifications"] += max(0, stats["enqueued"] - stats.get("accepted", 0) - stats.get("rejected", 0) - stats.get("failed", 0) - held)
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
    tiles: Object.fromEntries(["unregistered", "accepted", "rejected", "failed"].map(k => [k, v("tile-" + k)])),
    entries: Object.fromEntries(["waiting", "pending", "delayed"].map(k => [k, v("entries-" + k)])),
    waitingNotifications: v("tile-waiting"), inFlightNotifications: v("tile-in-flight"),
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

# Before the page's own script runs: each view rendered is recorded as it was drawn (a
# MutationObserver's callback runs once the render is over, before the next paint): its Redis
# time, the fleet's rate, and the progress bar's drawn width against the fraction shown.
RECORDER = """window.__views = [];
new MutationObserver(() => {
  const bar = document.getElementById("fleet-bar"), style = getComputedStyle(bar);
  window.__views.push({time: Number(document.body.dataset.time), rate: document.getElementById("fleet-rate").dataset.value,
    rateText: document.getElementById("fleet-rate").textContent, fraction: document.getElementById("fleet-percent").dataset.value,
    drawn: parseFloat(style.width) / bar.parentElement.clientWidth, transition: style.transitionDuration});
}).observe(document, {subtree: true, attributes: true, attributeFilter: ["data-reads"]});"""

profile = tempfile.mkdtemp(prefix="swiftpush-chromium-")
browser = Browser(chromium, profile)
try:
    browser.call("Page.addScriptToEvaluateOnNewDocument", source=RECORDER)
    browser.call("Page.navigate", url=url)
    first = browser.wait_for("window.__views && window.__views.length >= 1 && window.__views[0]", 30)
    report(bool(first) and first["fraction"] not in ("", None) and float(first["fraction"]) > 0
           and abs(first["drawn"] - float(first["fraction"])) < 0.01 and first["transition"] == "0s",
           "the first paint is the state: the progress bar is drawn at the fraction shown, no transition toward it", str(first))
    moving = browser.wait_for("""(() => { const l = document.getElementById("chart-line");
        const rate = document.querySelector('#shards tr[data-shard="counted"]')?.cells[5].dataset.value;
        const spring = document.querySelector('#campaigns tr[data-campaign="spring"]')?.cells[7].dataset.value;
        return Number(document.body.dataset.reads) >= 4 && l && l.getAttribute("points").split(" ").length >= 3
          && Number(rate) > 0 && Number(spring) > 0; })()""", 60)
    report(bool(moving), "the page renders the live data: several views, a rate chart with a line, the counted shard's rate above 0, "
           "and campaign spring's rate (shards that never saw it do not blank it)")
    # Stop the load; two more views later Redis and the page hold the same figures.
    os.remove(live_flag)
    reads = browser.evaluate("Number(document.body.dataset.reads)")
    browser.wait_for(f"Number(document.body.dataset.reads) >= {reads + 2}", 30)
    dom = browser.evaluate(DOM)
    fig = redis_figures()

    tiles = {k: (int(x) if x else None) for k, x in dom["tiles"].items()}
    expected = {k: fig[k] for k in ("unregistered", "accepted", "rejected", "failed")}
    report(tiles == expected, "the notification tiles (410s, accepted, rejected, failed) are Redis's sums", f"{tiles} != {expected}")
    entries = {k: (int(x) if x else None) for k, x in dom["entries"].items()}
    expected = {k: fig[k] for k in ("waiting", "pending", "delayed")}
    report(entries == expected, "Redis's queue (waiting, pending, delayed) is shown in entries, as Redis holds it", f"{entries} != {expected}")
    # A dead consumer holds 15 of paused's entries: how many notifications are in flight is not known.
    report(dom["waitingNotifications"] == str(fig["waiting_notifications"]) and dom["inFlightNotifications"] == "",
           "notifications waiting are enqueued less settled less in flight; in flight is unknown (–) where a dead consumer holds entries",
           f"{dom['waitingNotifications']!r}, {dom['inFlightNotifications']!r} vs {fig['waiting_notifications']}")
    reasons = {k: int(x) for k, x in dom["reasons"].items()}
    report(reasons == fig["reasons"], "the reasons are the counted shards' reason:<R> sums", f"{reasons} != {fig['reasons']}")
    shard_ok = all(
        s in dom["shards"] and [int(x) for x in (dom["shards"][s][8], dom["shards"][s][9], dom["shards"][s][10], dom["shards"][s][11])]
        == [f["waiting"], f["pending"], f["delayed"], f["unregistered"]] for s, f in fig["shards"].items())
    report(shard_ok and set(dom["shards"]) == set(fig["shards"]), "each shard's row: waiting, in flight, delayed, 410s as Redis holds them",
           f"{ {s: r[8:12] for s, r in dom['shards'].items()} } vs {fig['shards']}")
    camp_ok = all(c in dom["campaigns"] and int(dom["campaigns"][c][3]) == f["accepted"] + f["rejected"] + f["failed"]
                  and int(dom["campaigns"][c][4]) == max(f["enqueued"], f["accepted"] + f["rejected"] + f["failed"])
                  for c, f in fig["campaigns"].items())
    report(camp_ok and set(dom["campaigns"]) == set(fig["campaigns"]), "each campaign's row: done and of (enqueued, or done once it outgrew it) as counted",
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
        state: document.getElementById("fleet-state").dataset.value, eta: document.getElementById("fleet-eta").textContent,
        notes: [...document.querySelectorAll("#notes li")].map(li => li.textContent),
        error: document.getElementById("error").style.display, rows: [...document.querySelectorAll("#campaigns tbody tr[data-campaign]")].map(r => r.cells[1].textContent)})()""", 30)
    report(bool(empty) and empty["scope"] == "campaign nope" and empty["state"] == "unknown" and empty["done"] == ""
           and empty["eta"] == "–" and empty["error"] == "none" and empty["rows"] == ["unknown"]
           and "campaign nope unknown: no shard shown counts it; known campaigns: autumn, spring" in empty["notes"],
           "an unknown campaign says it is unknown (no figures, not 'done') and names the known ones, not an error page", str(empty))
    browser.call("Page.navigate", url=base + "/?shards=zz")
    empty = browser.wait_for("""(() => Number(document.body.dataset.reads) >= 2 && {
        rows: [...document.querySelectorAll("#shards tbody tr[data-shard]")].map(r => r.cells[0].textContent + " " + r.cells[1].textContent),
        state: document.getElementById("fleet-state").dataset.value, notes: [...document.querySelectorAll("#notes li")].map(li => li.textContent),
        error: document.getElementById("error").style.display, pending: document.getElementById("entries-pending").dataset.value})()""", 30)
    report(bool(empty) and empty["rows"] == ["zz (unknown) unknown"] and empty["state"] == "unknown" and empty["error"] == "none"
           and empty["pending"] == "0" and "shard zz unknown: no key of it in Redis; known shards: counted, paused, w" in empty["notes"],
           "an unknown shard says it is unknown and names the known ones, not an error page", str(empty))

    # A pause in the reads: the worker's status clock moved 30 s forward (as if nobody had
    # looked for 30 s). The first view after it has no rate (–), not one measured across the
    # pause; the chart draws the runs before and after apart, with a gap of at least 10 s.
    browser.call("Page.navigate", url=base + "/")
    before = browser.wait_for("""(() => { const l = document.getElementById("chart-line");
        return window.__views.length >= 3 && l && l.tagName === "polyline" && Number(document.body.dataset.time); })()""", 30)
    with open(clock_file, "w") as f:
        f.write("30000\n")
    after = browser.wait_for(f"""(() => {{ const segs = [...document.querySelectorAll("#chart .rate-segment")];
        const later = window.__views.filter(v => v.time > {before or 0} + 20000);
        return later.length >= 2 && segs.length >= 2 && {{
          first: later[0], segments: segs.map(e => [Number(e.dataset.t0), Number(e.dataset.t1)]),
          gaps: [...document.querySelectorAll("#chart .rate-gap")].length, rate: document.getElementById("fleet-rate").dataset.value}}; }})()""", 30)
    segments = after["segments"] if after else []
    report(bool(after) and after["first"]["rate"] == "" and after["first"]["rateText"] == "–" and after["rate"] != "",
           "the first view after a pause in the reads shows no rate (–), not a figure from before it; the next one measures again", str(after))
    report(len(segments) >= 2 and segments[-1][0] - segments[-2][1] >= 10_000 and segments[-1][0] > (before or 0) + 20_000
           and after["gaps"] >= 1, "the chart draws a gap of 10 s or more across the pause (separate runs, 'not measured'), not a line", str(after))
finally:
    browser.close()
sys.exit(1 if failures else 0)
