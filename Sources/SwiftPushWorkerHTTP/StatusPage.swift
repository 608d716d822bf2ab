import SwiftPushWorker

/// The status page (`/`): one self-contained HTML document — its style and script inline, no
/// font, script or image from anywhere else (these machines, and many production networks,
/// have no internet; the Content-Security-Policy makes the browser refuse any other source).
/// It loads `/status.json` once, then follows `/events`, passing its own query (`?campaign=`,
/// `?shards=`) to both. Every text from Redis is set as text (`textContent`), never as HTML:
/// a campaign or consumer name cannot inject markup.
///
/// Every figure is labelled with its unit: notifications, or stream entries where Redis's own
/// queue is shown (issue 35). The first paint is the state (no transition animates a bar toward
/// it), and the rate chart draws each run of measured reads on its own: a gap where nobody read.
///
/// The elements a test reads carry `data-value` (the raw number) and stable ids; the body's
/// `data-reads` counts the views rendered.
enum StatusPage {
    /// Sent with the page: nothing but itself and its own origin's JSON.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The counters the page shows of its own worker, as a JavaScript array: the counter
    /// table's (`ShardMachine.Counters.table`), in its order.
    static let pageCounters = "[" + ShardMachine.Counters.names(in: .page).map { "\"\($0)\"" }.joined(separator: ", ") + "]"

    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>swiftpush · fleet status</title>
<style>
  :root { --fg: #1d2330; --muted: #667085; --line: #e4e7ec; --bg: #f6f7f9; --card: #fff;
          --accent: #2f6fed; --ok: #1a7f4b; --warn: #b54708; --bad: #c0262d; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; padding: 14px 24px; background: #1d2330; color: #fff; }
  header h1 { font-size: 17px; margin: 0; font-weight: 600; }
  header .meta { color: #c3c8d4; font-size: 13px; }
  header nav { margin-left: auto; font-size: 13px; }
  header nav a { color: #9fc0ff; margin-left: 10px; }
  #live { font-size: 13px; }
  #live.on::before { content: "●"; color: #4ade80; margin-right: 5px; }
  #live.off::before { content: "●"; color: #f87171; margin-right: 5px; }
  main { padding: 18px 24px 40px; max-width: 1280px; margin: 0 auto; }
  .card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin-bottom: 16px; }
  .card h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0 0 10px; font-weight: 600; }
  .progress-line { display: flex; align-items: baseline; gap: 18px; flex-wrap: wrap; }
  .big { font-size: 28px; font-weight: 600; }
  .bar { height: 14px; background: #e9edf5; border-radius: 7px; overflow: hidden; margin: 10px 0 4px; }
  /* No transition: a bar caught mid-animation (a screenshot, a glance) would show a state that
     never was; each view is drawn as it is. */
  .bar > div { height: 100%; background: var(--accent); width: 0; }
  .bar.small { height: 8px; margin: 2px 0; min-width: 80px; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 10px; margin-bottom: 16px; }
  .tile { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
  .tile .label { color: var(--muted); font-size: 12px; }
  .tile .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
  .tile.bad .value { color: var(--bad); } .tile.ok .value { color: var(--ok); } .tile.warn .value { color: var(--warn); }
  .row { display: grid; grid-template-columns: 3fr 2fr; gap: 16px; }
  @media (max-width: 900px) { .row { grid-template-columns: 1fr; } }
  table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
  th, td { text-align: right; padding: 5px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
  th:first-child, td:first-child, th.text { text-align: left; }
  th { color: var(--muted); font-weight: 600; font-size: 12px; }
  td.text { text-align: left; }
  .muted { color: var(--muted); }
  .stale { color: var(--bad); font-weight: 600; }
  .reason { display: grid; grid-template-columns: 170px 1fr 80px; align-items: center; gap: 8px; margin: 4px 0; }
  .reason .fill { height: 10px; background: #f1a9a0; border-radius: 5px; }
  .reason .n { text-align: right; font-variant-numeric: tabular-nums; }
  svg text { font-size: 11px; fill: var(--muted); }
  #notes li { color: var(--warn); margin: 3px 0; }
  .state { font-size: 13px; font-weight: 600; padding: 2px 8px; border-radius: 10px; background: #e9edf5; }
  .state.working { background: #dbe7ff; color: var(--accent); } .state.done { background: #dcf3e5; color: var(--ok); }
  .state.unknown { background: #fdecec; color: var(--bad); }
  #error { display: none; background: #fdecec; color: var(--bad); border: 1px solid #f5c2c2; }
  .empty { color: var(--muted); font-style: italic; }
  code { font-size: 12px; }
</style>
</head>
<body data-reads="0">
<header>
  <h1>swiftpush · fleet status</h1>
  <span class="meta" id="scope">all notifications</span>
  <span class="meta" id="when">waiting for the first read…</span>
  <span id="live" class="off">connecting</span>
  <nav id="views"></nav>
</header>
<main>
  <div class="card" id="error"></div>
  <div class="card">
    <h2 id="progress-title">Progress</h2>
    <div class="progress-line">
      <span class="big" id="fleet-percent" data-value="">–</span>
      <span><b id="fleet-done" data-value="">–</b> of <b id="fleet-total" data-value="">–</b> <span id="fleet-unit">notifications</span></span>
      <span>rate <b id="fleet-rate" data-value="">–</b> <span id="fleet-rate-unit" class="muted"></span></span>
      <span>time left <b id="fleet-eta" data-value="">–</b></span>
      <span class="state" id="fleet-state" data-value="">–</span>
    </div>
    <div class="bar"><div id="fleet-bar"></div></div>
    <div class="muted" id="fleet-other"></div>
  </div>
  <div class="tiles">
    <div class="tile"><div class="label">notifications waiting</div><div class="value" id="tile-waiting" data-value="">–</div></div>
    <div class="tile"><div class="label">notifications in flight</div><div class="value" id="tile-in-flight" data-value="">–</div></div>
    <div class="tile ok"><div class="label">notifications accepted</div><div class="value" id="tile-accepted" data-value="">–</div></div>
    <div class="tile bad"><div class="label">notifications rejected</div><div class="value" id="tile-rejected" data-value="">–</div></div>
    <div class="tile bad"><div class="label">notifications failed</div><div class="value" id="tile-failed" data-value="">–</div></div>
    <div class="tile warn"><div class="label">410s (gone tokens)</div><div class="value" id="tile-unregistered" data-value="">–</div></div>
  </div>
  <p class="muted" id="entries-line">Redis's queue, in stream entries (a batch or multicast entry holds many notifications):
    <b id="entries-waiting" data-value="">–</b> waiting · <b id="entries-pending" data-value="">–</b> pending ·
    <b id="entries-delayed" data-value="">–</b> delayed (429)</p>
  <div class="row">
    <div class="card">
      <h2><span id="chart-unit">notifications</span> settled per second (last <span id="chart-span">–</span>)</h2>
      <svg id="chart" viewBox="0 0 640 170" width="100%" height="170" role="img" aria-label="rate chart"></svg>
    </div>
    <div class="card">
      <h2>Not accepted, by reason</h2>
      <div id="reasons"></div>
    </div>
  </div>
  <div class="card">
    <h2>Shards</h2>
    <table id="shards"><thead><tr><th>shard</th><th class="text">state</th><th>done</th><th>of</th><th class="text">unit</th><th>rate</th><th>time left</th><th>notifications in flight</th><th>entries waiting</th><th>entries pending</th><th>entries delayed</th><th>410s</th><th>consumers</th></tr></thead><tbody></tbody></table>
  </div>
  <div class="row">
    <div class="card">
      <h2>Campaigns</h2>
      <table id="campaigns"><thead><tr><th>campaign</th><th class="text">state</th><th>progress</th><th>done</th><th>of</th><th>rejected</th><th>failed</th><th>rate</th><th>time left</th></tr></thead><tbody></tbody></table>
    </div>
    <div class="card">
      <h2>Apps</h2>
      <table id="apps"><thead><tr><th>app</th><th>accepted</th><th>rejected</th><th>failed</th><th>rate</th></tr></thead><tbody></tbody></table>
    </div>
  </div>
  <div class="card">
    <h2>Workers of group <span id="group">–</span></h2>
    <table id="workers"><thead><tr><th>consumer</th><th class="text">host</th><th>pid</th><th class="text">shards</th><th>last heartbeat</th><th>notifications in flight</th><th>entries pending (Redis)</th><th>idle (Redis)</th></tr></thead><tbody></tbody></table>
  </div>
  <div class="row">
    <div class="card">
      <h2>This worker: <span id="this-name">–</span></h2>
      <table id="this-outcomes"><thead><tr><th>app</th><th class="text">outcome</th><th class="text">reason</th><th>notifications</th></tr></thead><tbody></tbody></table>
      <p class="muted" id="this-counters"></p>
    </div>
    <div class="card">
      <h2>Latest 410s</h2>
      <table id="gone"><thead><tr><th>token</th><th class="text">app</th><th class="text">reason</th><th>shard</th><th>when</th></tr></thead><tbody></tbody></table>
    </div>
  </div>
  <div class="card" id="notes-card"><h2>Notes</h2><ul id="notes"></ul></div>
</main>
<script>
"use strict";
const $ = id => document.getElementById(id);
const query = location.search;
const fmt = n => n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US");
function rate(r) { return r === null || r === undefined ? "–" : (r < 10 ? r.toFixed(1) : fmt(Math.round(r))) + "/s"; }
function duration(s) {
  if (s === null || s === undefined) return "–";
  if (s <= 0) return "done";
  s = Math.ceil(s);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + String(s % 60).padStart(2, "0") + "s";
  if (s < 360000) return Math.floor(s / 3600) + "h " + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
  return ">99h";
}
function age(ms) {
  if (ms < 10000) return (ms / 1000).toFixed(1) + "s";
  const s = Math.floor(ms / 1000);
  if (s < 120) return s + "s";
  if (s < 7200) return Math.floor(s / 60) + "m";
  if (s < 172800) return Math.floor(s / 3600) + "h";
  return Math.floor(s / 86400) + "d";
}
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function num(value, text) { return el("td", {"data-value": value === null || value === undefined ? "" : String(value)}, text === undefined ? fmt(value) : text); }
function setValue(id, value, text) {
  const e = $(id);
  e.dataset.value = value === null || value === undefined ? "" : String(value);
  e.textContent = text === undefined ? fmt(value) : text;
}
function fill(id, rows, empty) {
  const body = $(id).tBodies[0];
  body.replaceChildren(...rows);
  if (!rows.length) body.append(el("tr", {}, el("td", {class: "empty", colspan: "12"}, empty)));
}
function bar(fraction) {
  const d = el("div");
  d.style.width = fraction === null || fraction === undefined ? "0" : (fraction * 100).toFixed(1) + "%";
  return el("div", {class: "bar small"}, d);
}
// A progress's figures in its own unit (the JSON names each by unit; a mixed one has none).
const inUnit = (p, name) => p.unit === "entries" ? p[name + "_entries"] : p[name + "_notifications"];
const perSecond = p => p.unit === "entries" ? p.entries_per_s : p.notifications_per_s;
function percent(f) { return f === null || f === undefined ? "–" : (Math.floor(f * 1000) / 10).toFixed(1) + "%"; }

// Each run of measured reads is drawn on its own: between two runs nobody measured (no page was
// open, or the first read after a pause has no rate yet), so nothing is drawn there but a label.
function chart(h, now) {
  const svg = $("chart"), W = 640, H = 170, left = 56, bottom = 22, top = 8;
  svg.replaceChildren();
  const ns = "http://www.w3.org/2000/svg";
  const mk = (tag, attrs, text) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (text !== undefined) e.textContent = text; return e; };
  $("chart-unit").textContent = h.unit === "entries_per_s" ? "entries" : "notifications";
  const segs = h.segments.filter(g => g.length), points = segs.flat();
  if (!points.length) {
    svg.append(mk("text", {x: W / 2, y: H / 2, "text-anchor": "middle"}, "measuring…"));
    $("chart-span").textContent = "–";
    return;
  }
  const t0 = points[0][0], t1 = Math.max(now, points[points.length - 1][0]), span = Math.max(1, t1 - t0);
  const max = Math.max(1, ...points.map(p => p[1]));
  const x = t => left + (W - left - 8) * (t - t0) / span, y = r => top + (H - top - bottom) * (1 - r / max);
  for (const f of [0, 0.5, 1]) {
    svg.append(mk("line", {x1: left, x2: W - 8, y1: y(max * f), y2: y(max * f), stroke: "#e4e7ec"}));
    svg.append(mk("text", {x: left - 6, y: y(max * f) + 4, "text-anchor": "end"}, rate(max * f)));
  }
  segs.forEach((g, i) => {
    const a = g[0][0], b = g[g.length - 1][0], last = i === segs.length - 1;
    const pts = g.map(p => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1));
    const attrs = {class: "rate-segment", "data-t0": String(a), "data-t1": String(b)};
    if (last) attrs.id = "chart-line";
    if (g.length === 1) {
      svg.append(mk("circle", {...attrs, cx: x(a).toFixed(1), cy: y(g[0][1]).toFixed(1), r: "2.5", fill: "#2f6fed", points: pts[0]}));
    } else {
      svg.append(mk("polygon", {points: x(a) + "," + y(0) + " " + pts.join(" ") + " " + x(b) + "," + y(0), fill: "#2f6fed22"}));
      svg.append(mk("polyline", {...attrs, points: pts.join(" "), fill: "none", stroke: "#2f6fed", "stroke-width": "2"}));
    }
    if (i > 0) {
      const gapFrom = segs[i - 1][segs[i - 1].length - 1][0];
      svg.append(mk("text", {x: ((x(gapFrom) + x(a)) / 2).toFixed(1), y: y(max / 2), "text-anchor": "middle", class: "rate-gap",
                             "data-t0": String(gapFrom), "data-t1": String(a)}, "not measured"));
    }
  });
  svg.append(mk("text", {x: left, y: H - 6}, "-" + age(now - t0)));
  svg.append(mk("text", {x: W - 8, y: H - 6, "text-anchor": "end"}, "now"));
  $("chart-span").textContent = age(span);
}

function render(s) {
  document.body.dataset.reads = String(Number(document.body.dataset.reads) + 1);
  document.body.dataset.time = String(s.time_ms);
  $("error").style.display = s.error ? "block" : "none";
  $("error").textContent = s.error ? "Could not read everything: " + s.error : "";
  $("scope").textContent = s.campaign === null ? "all notifications" : "campaign " + s.campaign;
  $("when").textContent = s.time_ms ? "read " + new Date(s.time_ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "not read";
  $("group").textContent = s.group;
  $("progress-title").textContent = s.campaign === null ? "Progress of the fleet" : "Progress of campaign " + s.campaign;

  // Shards counting notifications and shards counting entries: the first in the big line,
  // the other below it.
  const f = s.fleet, p = f.progress.unit === "mixed" ? f.progress_by_unit[0] : f.progress;
  const other = f.progress.unit === "mixed" ? f.progress_by_unit[1] : null;
  $("fleet-other").textContent = other ? "and in the shards whose workers count nothing in Redis: " + fmt(other.done_entries) + " of " + fmt(other.total_entries)
      + " entries, " + rate(other.entries_per_s) + " entries, time left " + duration(other.eta_s) : "";
  setValue("fleet-percent", p.fraction, percent(p.fraction));
  setValue("fleet-done", inUnit(p, "done"));
  setValue("fleet-total", inUnit(p, "total"));
  $("fleet-unit").textContent = p.unit;
  setValue("fleet-rate", perSecond(p), rate(perSecond(p)));
  $("fleet-rate-unit").textContent = p.unit;
  setValue("fleet-eta", p.eta_s, duration(p.eta_s));
  setValue("fleet-state", f.state, f.state);
  $("fleet-state").className = "state " + f.state;
  $("fleet-bar").style.width = p.fraction === null ? "0" : (p.fraction * 100).toFixed(1) + "%";
  setValue("tile-waiting", f.waiting_notifications);
  setValue("tile-in-flight", f.in_flight_notifications);
  setValue("tile-unregistered", f.unregistered_notifications);
  setValue("entries-waiting", f.waiting_entries);
  setValue("entries-pending", f.pending_entries);
  setValue("entries-delayed", f.delayed_entries);
  const o = f.outcomes;
  for (const k of ["accepted", "rejected", "failed"]) setValue("tile-" + k, o ? o[k + "_notifications"] : null);

  chart(s.rate_history, s.time_ms);
  const reasons = $("reasons");
  reasons.replaceChildren();
  if (!o) reasons.append(el("p", {class: "empty"}, "not counted by these workers (see the notes)"));
  else if (!o.reasons.length) reasons.append(el("p", {class: "empty"}, "none: every outcome so far was accepted"));
  else {
    const top = o.reasons[0].notifications;
    for (const r of o.reasons.slice(0, 12)) {
      const fillDiv = el("div", {class: "fill"});
      fillDiv.style.width = (100 * r.notifications / top).toFixed(1) + "%";
      reasons.append(el("div", {class: "reason", "data-reason": r.reason}, el("span", {}, r.reason), el("div", {}, fillDiv), el("span", {class: "n", "data-value": String(r.notifications)}, fmt(r.notifications))));
    }
  }

  fill("shards", s.shards.map(sh => sh.error
      ? el("tr", {"data-shard": sh.shard}, el("td", {}, sh.shard), el("td", {class: "text stale", colspan: "12"}, "could not be read: " + sh.error))
      : el("tr", {"data-shard": sh.shard, class: sh.known ? "" : "muted"},
          el("td", {}, sh.shard + (sh.known ? "" : " (unknown)")), el("td", {class: "text", "data-value": sh.state}, sh.state),
          num(inUnit(sh.progress, "done")), num(inUnit(sh.progress, "total")), el("td", {class: "text"}, sh.progress.unit),
          num(perSecond(sh.progress), rate(perSecond(sh.progress))), num(sh.progress.eta_s, duration(sh.progress.eta_s)),
          num(sh.in_flight_notifications), num(sh.waiting_entries), num(sh.pending_entries), num(sh.delayed_entries),
          num(sh.unregistered_notifications), num(sh.consumers))), "no shard");

  fill("campaigns", s.campaigns.map(c => el("tr", {"data-campaign": c.name},
      el("td", {}, el("a", {href: "?campaign=" + encodeURIComponent(c.name)}, c.name)), el("td", {class: "text", "data-value": c.state}, c.state + (c.control && c.control !== "active" ? " (" + c.control + ")" : "") + (c.rate_limit_per_s ? " ≤" + c.rate_limit_per_s + "/s" : "")),
      el("td", {}, bar(c.progress.fraction)), num(c.progress.done_notifications), num(c.progress.total_notifications),
      num(c.outcomes.rejected_notifications), num(c.outcomes.failed_notifications), num(c.progress.notifications_per_s, rate(c.progress.notifications_per_s)),
      num(c.progress.eta_s, duration(c.progress.eta_s)))), "no campaign counted");
  fill("apps", s.apps.map(a => el("tr", {"data-app": a.name}, el("td", {}, a.name), num(a.outcomes.accepted_notifications),
      num(a.outcomes.rejected_notifications), num(a.outcomes.failed_notifications), num(a.progress.notifications_per_s, rate(a.progress.notifications_per_s)))),
      s.campaign === null ? "no app counted" : "(all apps: see the fleet view)");

  fill("workers", s.workers.map(w => el("tr", {"data-worker": w.consumer},
      el("td", {}, w.consumer), el("td", {class: "text"}, w.host || "–"), el("td", {}, w.pid === null ? "–" : String(w.pid)),
      el("td", {class: "text"}, w.shards.join(", ")),
      el("td", {class: w.stale ? "stale" : "", "data-value": w.heartbeat_age_ms === null ? "" : String(w.heartbeat_age_ms)},
         w.heartbeat_age_ms === null ? "none written" : (w.stale ? "stale, " : "") + age(w.heartbeat_age_ms) + " ago"),
      num(w.in_flight_notifications), num(w.redis_pending_entries), num(w.redis_idle_ms, w.redis_idle_ms === null ? "–" : age(w.redis_idle_ms)))),
      "no worker known");

  const me = s.this_worker;
  $("this-name").textContent = me ? me.consumer + (me.live ? "" : " (loop stuck)") : "–";
  fill("this-outcomes", me ? me.outcomes.map(x => el("tr", {"data-outcome": x.app + "/" + x.outcome + "/" + x.reason}, el("td", {}, x.app), el("td", {class: "text"}, x.outcome),
      el("td", {class: "text"}, x.reason || "–"), num(x.notifications))) : [], "no outcome recorded yet");
  $("this-counters").textContent = me ? \#(pageCounters)
      .filter(k => k in me.counters).map(k => k.replaceAll("_", " ") + " " + fmt(me.counters[k])).join(" · ") : "";

  fill("gone", s.recent_unregistered.map(g => el("tr", {}, el("td", {}, el("code", {}, g.token)), el("td", {class: "text"}, g.app),
      el("td", {class: "text"}, g.reason), el("td", {}, g.shard), el("td", {}, age(Math.max(0, s.time_ms - g.time_ms)) + " ago"))),
      s.campaign === null ? "none" : "(not kept per campaign)");

  $("notes").replaceChildren(...s.notes.map(n => el("li", {}, n)));
  $("notes-card").style.display = s.notes.length ? "block" : "none";

  const views = $("views");
  views.replaceChildren(el("a", {href: "?"}, "all"), ...s.campaigns.slice(0, 8).map(c => el("a", {href: "?campaign=" + encodeURIComponent(c.name)}, c.name)));
}

fetch("/status.json" + query).then(r => r.json()).then(render).catch(() => {});
const events = new EventSource("/events" + query);
events.onopen = () => { $("live").className = "on"; $("live").textContent = "live"; };
events.onerror = () => { $("live").className = "off"; $("live").textContent = "reconnecting"; };
events.onmessage = e => render(JSON.parse(e.data));
</script>
</body>
</html>
"""#
}
