"""The script of the HTML report, inlined into each file (the report must open from disk with no
network; its stylesheet is html_style.py). The script only ever sets textContent: everything it shows
came from the run and may have been written by the agent under test."""

JS = r"""
(function(){
"use strict";
// The cases arrive gzip-compressed in base64 (runner/report/html_data.py): an index of small rows for
// the list, decoded at once, and the whole cases in chunks, each decoded when one of its cases opens.
var data = JSON.parse(document.getElementById("evalrun-data").textContent);
var cases = [];  // index rows: id, run, repeat, status, source, description, tags, reasons, completion, time
var regressed = {}; (data.regressed || []).forEach(function(k){ regressed[k] = true; });
var fixed = {}; (data.fixed || []).forEach(function(k){ fixed[k] = true; });
// Where each case's conversation came from, in the console's words (runner.results.models.SOURCE_LABELS).
var SOURCES = data.sources || {};
function sourceLabel(c){ return Object.prototype.hasOwnProperty.call(SOURCES, c.conversation_source) ? SOURCES[c.conversation_source] : ""; }
// A case's key, as the baseline comparison and #case= links name it: its id, and its recorded run if any.
function key(c){ var k = c.run === null || c.run === undefined ? String(c.id) : c.id + " (run " + c.run + ")";
  return c.variant ? k + " [" + c.variant + "]" : k; }  // a --matrix run: a case per variant
// Problems first: cases that fell behind the baseline, then failed, errored and unscored ones, then
// skipped and passed ones; collection order within each group.
var RANK = {failed: 1, error: 1, unscored: 1, skipped: 2, passed: 3};
function rank(i){ var c = cases[i]; return regressed[key(c)] && c.status !== "passed" ? 0 : (c.status in RANK ? RANK[c.status] : 1); }
var order = [];
var BATCH = 200;
var STATUSES = ["passed","failed","error","unscored","skipped"];
var shown = {}; STATUSES.forEach(function(s){ shown[s] = true; });
var query = "";
var matching = [];
var drawn = 0;
var tbody = document.getElementById("case-rows");
var countLine = document.getElementById("case-count");
var moreButton = document.getElementById("more");
var problem = document.getElementById("data-problem");

function inflate(b64){  // base64 of a gzip member -> the JSON value it holds
  var text = atob(b64), bytes = new Uint8Array(text.length);
  for (var n = 0; n < text.length; n++) bytes[n] = text.charCodeAt(n);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(JSON.parse);
}
var chunks = {}, chunkOrder = [], KEPT_CHUNKS = 8;
function chunkOf(i){  // the last chunk that starts at or before case i
  var lo = 0, hi = data.starts.length - 1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (data.starts[mid] <= i) lo = mid; else hi = mid - 1; }
  return lo;
}
function fullCase(i){  // a promise of case i whole, decoding its chunk once (the last few stay decoded)
  var k = chunkOf(i);
  if (!chunks[k]) {
    chunks[k] = inflate(data.chunks[k]);
    chunkOrder.push(k);
    if (chunkOrder.length > KEPT_CHUNKS) delete chunks[chunkOrder.shift()];
  }
  return chunks[k].then(function(list){ return list[i - data.starts[k]]; });
}

// Control and bidi/format characters (an escape sequence, a right-to-left override) are shown as
// \\uXXXX instead of being obeyed; newlines and tabs stay.
var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
function visible(text){
  return text.replace(INVISIBLE, function(ch){ return "\\u" + ("000" + ch.charCodeAt(0).toString(16)).slice(-4); });
}
// Every node is built here; strings always become text nodes (never markup).
function el(tag, cls, children){
  var node = document.createElement(tag);
  if (cls) node.className = cls;
  (children || []).forEach(function(child){
    if (child === null || child === undefined) return;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(visible(String(child))));
  });
  return node;
}
function show(value){
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value, null, 1);
}
function pct(v){ return v === null || v === undefined ? "—" : (v * 100).toFixed(1) + "%"; }
function suiteFile(c){ var m = /^(.*):(\d+):(\d+)$/.exec(c.source || ""); return m ? m[1] : (c.source || ""); }
function reasons(c){
  if (c.status === "failed") return c.failures && c.failures.length ? c.failures : ["failed"];
  if (c.status === "error") return [c.error || "ended in error"];
  if (c.status === "unscored") return [c.unscored_reason || "could not be scored"];
  if (c.status === "skipped") return [c.skip_reason || "skipped"];
  return [];
}
function extraCalls(c){  // as runner.report.saved.extra_calls_text: "2 extra calls: cancel_order, issue_refund"
  var names = Array.isArray(c.extra_calls) ? c.extra_calls.map(String) : [];
  if (!names.length) return "";
  var counts = {}, order = [];
  names.forEach(function(n){ if (!(n in counts)) { counts[n] = 0; order.push(n); } counts[n]++; });
  return names.length + " extra call" + (names.length > 1 ? "s" : "") + ": " +
    order.map(function(n){ return counts[n] > 1 ? n + " \u00d7" + counts[n] : n; }).join(", ");
}
var haystacks = null;
function haystack(i){
  if (!haystacks) haystacks = new Array(cases.length);
  if (haystacks[i] === undefined) {
    var c = cases[i];
    haystacks[i] = [key(c), c.description || "", (c.tags || []).join(" "), c.source || "", reasons(c).join(" ")].join("\n").toLowerCase();
  }
  return haystacks[i];
}

function applyFilters(){
  matching = [];
  for (var n = 0; n < order.length; n++) {
    var i = order[n];
    if (shown[cases[i].status] === false) continue;  // a status this page does not know stays listed
    if (query && haystack(i).indexOf(query) < 0) continue;
    matching.push(i);
  }
  tbody.textContent = "";
  drawn = 0;
  drawMore();
}
function drawMore(){
  var end = Math.min(drawn + BATCH, matching.length);
  var frag = document.createDocumentFragment();
  for (; drawn < end; drawn++) frag.appendChild(row(matching[drawn]));
  tbody.appendChild(frag);
  countLine.textContent = matching.length + " of " + cases.length + " cases shown" + (drawn < matching.length ? " (" + drawn + " listed)" : "");
  moreButton.hidden = drawn >= matching.length;
}
function row(i){
  var c = cases[i];
  var why = reasons(c)[0] || extraCalls(c) || (c.description || "");
  var jc = pct(c.completion);
  var mark = regressed[key(c)] ? el("span", "badge regressed", ["regressed"]) :
             fixed[key(c)] ? el("span", "badge fixed", ["newly passing"]) : null;
  var tr = el("tr", "case " + c.status + (regressed[key(c)] ? " regressed" : "") + (fixed[key(c)] ? " fixed" : ""), [
    el("td", null, [el("span", "badge " + c.status, [c.status]), mark, sourceLabel(c) ? el("span", "muted source", [" " + sourceLabel(c)]) : null]),
    el("td", "id", [key(c) + (c.repeat === null || c.repeat === undefined ? "" : " (repeat " + c.repeat + ")")]),
    el("td", "muted col-file", [suiteFile(c)]),
    el("td", "why col-why", [why]),
    el("td", "num", [jc]),
    el("td", "num col-time", [(c.duration_s || 0).toFixed(2) + "s"])
  ]);
  if (mark) mark.title = regressed[key(c)] ? "passed in the baseline run; does not pass now" : "did not pass in the baseline run; passes now";
  tr.dataset.index = i;
  tr.dataset.status = c.status;
  tr.title = why;
  tr.tabIndex = 0;  // reachable with Tab; Enter or Space opens it
  tr.addEventListener("click", function(){ toggle(tr, i); });
  tr.addEventListener("keydown", function(e){ if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(tr, i); } });
  return tr;
}
var opening = {};
// Opens or closes case i's details under its row; a promise, settled when they are shown.
function toggle(tr, i){
  var next = tr.nextSibling;
  if (next && next.classList && next.classList.contains("detail")) { next.remove(); tr.classList.remove("open"); return Promise.resolve(); }
  if (opening[i]) return opening[i];
  opening[i] = fullCase(i).then(detail, function(err){
    return el("div", "warn", ["The details of this case could not be read from the page: " + err]);
  }).then(function(box){
    delete opening[i];
    if (!tr.parentNode) return;  // the list was drawn again meanwhile
    var td = el("td", null, [box]);
    td.colSpan = 6;
    var d = el("tr", "detail", [td]);
    d.dataset.status = cases[i].status;
    tr.parentNode.insertBefore(d, tr.nextSibling);
    tr.classList.add("open");
    if (history.replaceState) history.replaceState(null, "", "#case=" + encodeURIComponent(key(cases[i])));
  });
  return opening[i];
}
// report.html#case=ID opens that case (its id, or "id (run N)"): shown whatever the filters, drawn,
// opened and scrolled to. A promise, settled when it is open.
function openFromHash(){
  var m = /^#case=(.*)$/.exec(location.hash);
  if (!m) return Promise.resolve();
  var wanted;
  try { wanted = decodeURIComponent(m[1]); } catch (e) { return Promise.resolve(); }
  var i = -1;
  for (var n = 0; n < cases.length; n++) { if (key(cases[n]) === wanted || String(cases[n].id) === wanted) { i = n; break; } }
  if (i < 0) { countLine.textContent = "no case '" + visible(wanted) + "' in this report"; return Promise.resolve(); }
  if (matching.indexOf(i) < 0) {
    document.querySelectorAll("input.status-filter").forEach(function(box){ box.checked = true; shown[box.value] = true; });
    query = ""; document.getElementById("search").value = "";
    applyFilters();
  }
  var at = matching.indexOf(i);
  while (drawn <= at) drawMore();
  var tr = tbody.querySelector('tr.case[data-index="' + i + '"]');
  var next = tr.nextSibling;
  var opened = next && next.classList && next.classList.contains("detail") ? Promise.resolve() : toggle(tr, i);
  return opened.then(function(){ tr.scrollIntoView({block: "start"}); });
}

function detail(c){
  var box = el("div", "case-detail", []);
  var link = el("a", "case-link", ["link"]);
  link.href = "#case=" + encodeURIComponent(key(c));
  var head = [el("span", "badge " + c.status, [c.status]), " ", el("code", null, [key(c)]), "  ", el("span", "muted", [c.source || ""]), link];
  box.appendChild(el("div", null, head));
  if (sourceLabel(c)) box.appendChild(el("div", "muted source", ["conversation: " + sourceLabel(c) + (c.conversation_source !== "live" && c.transcript_path ? ": " + c.transcript_path : "")]));
  if (regressed[key(c)]) box.appendChild(el("div", "warn regression", ["Regression: this case passed in the baseline run and does not pass now."]));
  if (c.description) box.appendChild(el("div", null, [c.description]));
  if (c.tags && c.tags.length) box.appendChild(el("div", "muted", ["tags: " + c.tags.join(", ")]));
  var why = reasons(c);
  if (why.length) {
    box.appendChild(el("h3", null, [c.status === "failed" ? "Why it failed" : c.status === "skipped" ? "Why it was skipped" : "What went wrong"]));
    box.appendChild(el("ul", "reasons why-failed", why.map(function(line){ return el("li", null, [line]); })));
  }
  if (extraCalls(c)) box.appendChild(el("div", "warn extra-calls", [extraCalls(c)]));
  (c.judge_fallbacks || []).forEach(function(line){ box.appendChild(el("div", "warn", ["Decided without the judge: " + line])); });
  (c.notes || []).forEach(function(line){ box.appendChild(el("div", "muted", ["Note: " + line])); });
  if (c.metrics) box.appendChild(metrics(c));
  if ((c.goals || []).length || (c.calls || []).length) box.appendChild(callsDiff(c));
  var verdicts = argumentVerdicts(c);
  if (verdicts) box.appendChild(verdicts);
  var texts = textGoals(c);
  if (texts) box.appendChild(texts);
  if ((c.transcript || []).length) {
    box.appendChild(el("h3", null, ["Conversation" + (c.termination_reason ? " (ended: " + c.termination_reason + ")" : "")]));
    box.appendChild(chat(c.transcript));
  } else if (c.transcript_path) {
    box.appendChild(el("div", "muted", ["Conversation: " + c.transcript_path]));
  }
  if (c.model_usage && c.model_usage.calls) box.appendChild(el("div", "muted", [usageLine(c.model_usage)]));
  return box;
}
function metrics(c){
  var m = c.metrics, k = m.counts || {};
  return el("div", "muted", ["journey completion " + pct(m.journey_completion) + " · tool-call precision " + pct(m.tool_call_precision) +
    " · recall " + pct(m.tool_call_recall) + " · parameter F1 " + pct(m.tool_parameter_f1) + " · turns " + m.turns +
    " · calls " + (k.tool_calls || 0) + " (correct " + (k.correct_calls || 0) + ", wrong arguments " + (k.wrong_argument_calls || 0) +
    ", extra " + (k.extra_calls || 0) + ", forbidden " + (k.forbidden_calls || 0) + ")"]);
}
function usageLine(u){
  return "model calls " + u.calls + " (" + (u.cached || 0) + " cached, " + (u.errors || 0) + " errors) · tokens " +
    (u.prompt_tokens || 0) + " + " + (u.completion_tokens || 0) + (u.cost_usd !== null && u.cost_usd !== undefined ? " · $" + u.cost_usd.toFixed(4) : "");
}
function expectedArgs(goal){
  // The expected values the goal compared, from its closest attempt (mismatches are listed first).
  var best = null;
  (goal.attempts || []).forEach(function(a){ if (!best || a.matched) best = a; });
  if (!best) return null;
  var out = {};
  best.arguments.forEach(function(v){ out[v.path] = v.present || v.expected !== null ? v.expected : null; });
  return out;
}
function callsDiff(c){
  var calls = c.calls || [];
  var left = el("div", "expected", [el("h3", null, ["Expected (goals)"])]);
  (c.goals || []).filter(function(g){ return g.type === "tool_call"; }).forEach(function(g){
    var args = expectedArgs(g);
    var cls = g.achieved ? "box ok" : "box bad";
    left.appendChild(el("div", cls, [
      el("div", null, [el("b", null, [g.name]), " ", el("span", g.achieved ? "s-passed" : "s-failed", [g.achieved ? "achieved" : g.status.replace("_", " ")]),
        g.call_index !== null && g.call_index !== undefined ? el("span", "muted", ["  by call #" + (g.call_index + 1)]) : null]),
      args ? el("pre", null, [show(args)]) : null,
      g.achieved ? null : el("div", null, [g.explanation])
    ]));
  });
  var right = el("div", "actual", [el("h3", null, ["Actual tool calls"])]);
  if (!calls.length) right.appendChild(el("div", "muted", ["The agent made no tool call."]));
  calls.forEach(function(call){
    var cls = call.role === "goal" ? "box ok" : call.role === "ignored_failed" ? "box meh" : "box bad";
    right.appendChild(el("div", cls, [
      el("div", null, ["#" + (call.index + 1) + " ", el("b", null, [call.tool_name]), el("span", "muted", ["  message " + call.message + " · " + call.role.replace("_", " ") + (call.goal ? " → " + call.goal : "") + (call.is_error ? " · tool returned an error" : "")])]),
      el("pre", null, [show(call.arguments)]),
      call.note ? el("div", "muted", [call.note]) : null
    ]));
  });
  return el("div", "calls-diff", [el("h3", null, ["Tool calls: expected vs actual"]), el("div", "cols", [left, right])]);
}
function argumentVerdicts(c){
  var rows = [];
  (c.goals || []).forEach(function(g){
    (g.attempts || []).forEach(function(a){
      (a.arguments || []).forEach(function(v){
        rows.push(el("tr", v.matched ? null : "mismatch", [
          el("td", null, [g.name + " (call #" + (a.call_index + 1) + ")"]), el("td", null, [el("code", null, [v.path])]), el("td", null, [v.mode]),
          el("td", null, [el("code", null, [show(v.expected)])]), el("td", null, [el("code", null, [v.present ? show(v.actual) : "(absent)"])]),
          el("td", v.matched ? "s-passed" : "s-failed", [v.matched ? "match" : "mismatch"]), el("td", null, [v.decided_by]),
          el("td", "num", [v.score === null || v.score === undefined ? "—" : v.score.toFixed(3)]),
          el("td", null, [v.reason || "", v.judge_failure ? el("div", "s-failed", ["judge failed: " + v.judge_failure]) : null,
            (v.notes || []).length ? el("div", "muted", [v.notes.join("; ")]) : null])
        ]));
      });
    });
  });
  if (!rows.length) return null;
  var head = el("tr", null, ["goal", "argument", "mode", "expected", "actual", "verdict", "decided by", "score", "why"].map(function(h){ return el("th", null, [h]); }));
  // A wide table scrolls inside its own box: the page never grows wider than the window.
  return el("div", "arg-verdicts", [el("h3", null, ["Arguments"]), el("div", "scroll-x", [el("table", "args", [el("thead", null, [head]), el("tbody", null, rows)])])]);
}
function textGoals(c){
  var goals = (c.goals || []).filter(function(g){ return g.type !== "tool_call"; });
  if (!goals.length) return null;
  return el("div", "text-goals", [el("h3", null, ["Other goals"])].concat(goals.map(function(g){
    var d = g.text_decision;
    return el("div", g.achieved ? "box ok" : "box bad", [
      el("b", null, [g.name]), " ", el("span", g.achieved ? "s-passed" : "s-failed", [g.achieved ? "achieved" : g.status.replace("_", " ")]),
      el("div", null, [g.explanation]),
      (g.missing_keywords || []).length ? el("div", "missing-keywords", ["Missing keywords: ", el("code", null, [g.missing_keywords.join(", ")])]) : null,
      d ? el("div", "muted", ["decided by " + d.decided_by + (d.score !== null && d.score !== undefined ? " (score " + d.score.toFixed(3) + ")" : "") + (d.reason ? ": " + d.reason : "")]) : null,
      d && d.judge_failure ? el("div", "s-failed", ["judge failed: " + d.judge_failure]) : null
    ]);
  })));
}
function content(value){
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(function(part){ return part && typeof part.text === "string" ? part.text : JSON.stringify(part); }).join("\n");
  return JSON.stringify(value, null, 1);
}
function chat(messages){
  var box = el("div", "chat", []);
  messages.forEach(function(m, n){
    var role = typeof m.role === "string" ? m.role : "message";
    var cls = ["user","assistant","tool","system"].indexOf(role) >= 0 ? role : "system";
    var parts = [el("div", "who", [(n + 1) + " · " + role + (m.name ? " · " + m.name : "")])];
    var text = content(m.content);
    if (text) parts.push(el("div", "text", [text]));
    (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach(function(call){
      var f = call && call["function"] ? call["function"] : call || {};
      parts.push(el("pre", null, ["→ " + (f.name || "?") + "(" + (typeof f.arguments === "string" ? f.arguments : JSON.stringify(f.arguments)) + ")"]));
    });
    box.appendChild(el("div", "msg " + cls, parts));
  });
  return box;
}

function fail(message){
  problem.textContent = message;
  problem.hidden = false;
  countLine.textContent = "";
  document.body.dataset.ready = "failed";
}
function start(rows){
  cases = rows;
  order = cases.map(function(_, i){ return i; });
  order.sort(function(a, b){ return rank(a) - rank(b) || a - b; });
  document.querySelectorAll("input.status-filter").forEach(function(box){
    box.addEventListener("change", function(){ shown[box.value] = box.checked; applyFilters(); });
  });
  document.getElementById("only-problems").addEventListener("click", function(){
    document.querySelectorAll("input.status-filter").forEach(function(box){
      box.checked = box.value !== "passed" && box.value !== "skipped"; shown[box.value] = box.checked;
    });
    applyFilters();
  });
  var timer = null;
  document.getElementById("search").addEventListener("input", function(e){
    clearTimeout(timer);
    timer = setTimeout(function(){ query = e.target.value.trim().toLowerCase(); applyFilters(); }, 120);
  });
  moreButton.addEventListener("click", drawMore);
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function(entries){ if (entries[0].isIntersecting && !moreButton.hidden) drawMore(); }).observe(moreButton);
  }
  applyFilters();
  window.addEventListener("hashchange", openFromHash);
  return openFromHash();
}

if (typeof DecompressionStream !== "function") {
  fail("This browser cannot read the cases of this report: it has no DecompressionStream (Chrome and Edge 80+, " +
       "Firefox 113+, Safari 16.4+ have it). The summary above is complete; report.json holds every case.");
  return;
}
inflate(data.index).then(start).then(function(){ document.body.dataset.ready = "1"; }, function(err){
  fail("The cases of this report could not be read from the page: " + err);
});
})();
"""
