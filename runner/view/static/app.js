// evalrun view: the single-page app over a project's runs (runner/view): data, pages and routes; page.js holds
// the helpers that build the page (text nodes only), case.js a case's details. No library, no build step.
// Loaded after page.js and case.js (index.html).
(function(V){
"use strict";
var visible = V.visible, el = V.el, own = V.own, enc = V.enc, a = V.a, runHref = V.runHref, caseHref = V.caseHref, pct = V.pct, badge = V.badge, show = V.show, table = V.table, scroller = V.scroller, markOverflow = V.markOverflow, reasonsOf = V.reasonsOf, caseDetail = V.caseDetail, divergenceBox = V.divergenceBox;
var STATUSES = V.STATUSES;
var EXPORT = !!document.querySelector('meta[name="evalrun-export"]');
var app = document.getElementById("app"), crumbs = document.getElementById("crumbs");
var RANK = {failed: 0, error: 0, unscored: 0, skipped: 2, passed: 3};
var BATCH = 200;

function setCrumbs(parts){
  crumbs.textContent = "";
  parts.forEach(function(p){ crumbs.appendChild(el("span", null, [p[1] ? a(p[1], [p[0]]) : p[0]])); });
}
var rendering = 0;  // a page drawn for an older hash is dropped
var kept = {};  // what the reader set (searches, filters), kept when a page is drawn again
// A page showing a run still going is drawn again every few seconds, not while the reader is typing in it.
function refreshLater(token, redraw, ms){
  setTimeout(function(){
    if (token !== rendering) return;
    var typing = document.activeElement && document.activeElement.tagName === "INPUT" && document.activeElement.type === "search";
    if (typing) refreshLater(token, redraw, ms); else redraw();
  }, ms);
}
function begin(name, parts){
  rendering += 1;
  document.body.dataset.ready = "0";
  document.body.dataset.page = name;
  setCrumbs([["runs", "#/"]].concat(parts || []));
  app.textContent = "";
  app.appendChild(el("p", "muted", ["loading…"]));
  return rendering;
}
function done(token, nodes){
  if (token !== rendering) return false;
  app.textContent = "";
  nodes.forEach(function(n){ if (n) app.appendChild(n); });
  markOverflow();
  document.body.dataset.ready = "1";
  return true;
}
function failed(token, err){
  done(token, [el("div", "problem", [String(err && err.message || err)])]);
}

// ------------------------------------------------------------------ data: the server's API, or an export's files
var arrived = {}, waiting = {};
window.evalrunData = function(name, value){
  arrived[name] = value;
  (waiting[name] || []).forEach(function(w){ w[0](value); });
  delete waiting[name];
};
function loadFile(name){
  if (own(arrived, name)) return Promise.resolve(arrived[name]);
  return new Promise(function(resolve, reject){
    var first = !own(waiting, name);
    if (first) waiting[name] = [];
    waiting[name].push([resolve, reject]);
    if (!first) return;
    var s = document.createElement("script");
    s.src = "data/" + name + ".js";
    s.onerror = function(){
      (waiting[name] || []).forEach(function(w){ w[1](new Error("data/" + name + ".js could not be read")); });
      delete waiting[name];
    };
    document.body.appendChild(s);
  });
}
function getJSON(url){
  return fetch(url, {cache: "no-store"}).then(function(r){
    return r.json().then(function(body){ if (!r.ok) throw new Error(body.error || ("HTTP " + r.status)); return body; });
  });
}
var api = EXPORT ? {
  runs: function(){ return loadFile("runs"); },
  run: function(id){ return loadFile("runs").then(function(r){
    if (!own(r.files, id)) throw new Error("no run '" + id + "' in this export");
    return loadFile(r.files[id]); }); },
  chunk: function(id, k){ return loadFile("runs").then(function(r){ return loadFile(r.files[id] + "-chunk-" + k); }); },
  compare: function(x, y){ return loadFile("runs").then(function(r){
    var key = x + "\n" + y;
    if (!own(r.comparisons, key)) throw new Error("this export compares each run with the run just before it only: " +
      "serve the runs with `evalrun view` to compare any two");
    return loadFile(r.comparisons[key]); }); },
  caseHistory: function(key){ return loadFile("cases").then(function(c){
    if (!own(c, key)) throw new Error("no case '" + key + "' in the runs of this export");
    return c[key]; }); }
} : {
  runs: function(){ return getJSON("api/runs"); },
  run: function(id){ return getJSON("api/run?id=" + enc(id)); },
  chunk: function(id, k){ return getJSON("api/chunk?id=" + enc(id) + "&k=" + k); },
  compare: function(x, y){ return getJSON("api/compare?a=" + enc(x) + "&b=" + enc(y)); },
  caseHistory: function(key){ return getJSON("api/case?key=" + enc(key)); }
};
var chunkCache = {}, chunkOrder = [];
function fullCase(id, run, i){
  var lo = 0, hi = run.starts.length - 1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (run.starts[mid] <= i) lo = mid; else hi = mid - 1; }
  var name = id + "\n" + lo;
  if (!own(chunkCache, name)) {
    chunkCache[name] = api.chunk(id, lo);
    chunkOrder.push(name);
    if (chunkOrder.length > 6) delete chunkCache[chunkOrder.shift()];
  }
  return chunkCache[name].then(function(list){ return list[i - run.starts[lo]]; });
}

// ------------------------------------------------------------------ the runs list
function runsPage(){
  var token = begin("runs");
  api.runs().then(function(data){
    var runs = data.runs, picked = [];
    var search = el("input"); search.type = "search"; search.placeholder = "search run, suite, agent, model, commit…";
    search.setAttribute("aria-label", "search runs"); search.id = "run-search";
    var problemsOnly = el("input"); problemsOnly.type = "checkbox"; problemsOnly.id = "runs-not-passed";
    var compare = el("button", null, ["compare the two picked runs"]); compare.disabled = true; compare.id = "compare-picked";
    compare.addEventListener("click", function(){
      var sorted = picked.slice().sort(function(x, y){ return runs.indexOf(y) - runs.indexOf(x); });  // older first
      location.hash = "#/compare/" + enc(sorted[0].id) + "/" + enc(sorted[1].id);
    });
    var body = el("tbody");
    function draw(){
      var q = search.value.trim().toLowerCase();
      body.textContent = "";
      runs.forEach(function(run, n){
        if (q && haystack(run).indexOf(q) < 0) return;
        if (problemsOnly.checked && run.state === "finished" && run.summary && !(run.summary.failed || run.summary.error || run.summary.unscored)) return;
        var older = runs.slice(n + 1).filter(function(r){ return r.state !== "unreadable"; })[0];
        body.appendChild(runRow(run, older, picked, function(){ compare.disabled = picked.length !== 2; }));
      });
      markOverflow();
    }
    search.value = kept.runsQuery || ""; problemsOnly.checked = !!kept.runsProblems;
    search.addEventListener("input", function(){ kept.runsQuery = search.value; draw(); });
    problemsOnly.addEventListener("change", function(){ kept.runsProblems = problemsOnly.checked; draw(); });
    var heads = ["", "when", "run", "suites · selection", "agents · models", {text: "pass rate (95% CI)", cls: "num"},
                 "cases by status", {text: "duration", cls: "num"}, "cost · tokens", "git", ""];
    var tbl = el("table", "runs", [el("thead", null, [el("tr", null, heads.map(function(h){ return el("th", h.cls || null, [h.text || h]); }))]), body]);
    var nodes = [el("h1", null, ["Runs"]), el("div", "muted", [runs.length + " run(s) in " + data.root]),
      el("div", "toolbar", [search, el("label", null, [problemsOnly, " only runs with problems"]), compare]), scroller(tbl)];
    if (done(token, nodes)) draw();
    if (!EXPORT && runs.some(function(r){ return r.state === "running"; })) refreshLater(token, runsPage, 2000);
  }, function(err){ failed(token, err); });
}
function haystack(run){
  return [run.id, (run.paths || []).join(" "), (run.agents || []).join(" "), run.git || "", run.state, run.problem || "",
          JSON.stringify(run.selection || {})].join("\n").toLowerCase();
}
function runRow(run, older, picked, changed){
  var s = run.summary || {};
  var pick = el("input"); pick.type = "checkbox"; pick.setAttribute("aria-label", "pick " + run.id + " to compare");
  pick.addEventListener("change", function(){
    if (pick.checked) { picked.push(run); if (picked.length > 2) { var gone = picked.shift(); document.querySelectorAll("table.runs input").forEach(function(box){ if (box.dataset.run === gone.id) box.checked = false; }); } }
    else picked.splice(picked.indexOf(run), 1);
    changed();
  });
  pick.dataset.run = run.id;
  var tr = el("tr", "run-row", [el("td", null, [run.state === "unreadable" ? null : pick]),
    el("td", "mono", [(run.started_at || "").replace("T", " ").slice(0, 19)]),
    el("td", "key", [run.state === "unreadable" ? run.id : a(runHref(run.id), [run.id]), " ", run.state !== "finished" ? badge(run.state) : null,
      run.matrix ? el("span", "badge", ["matrix \u00d7" + run.matrix.variants]) : null]),
    el("td", null, [selectionText(run)]),
    el("td", null, [(run.agents || []).join(", ")])]);
  tr.dataset.run = run.id;
  if (run.state === "unreadable") {
    var why = el("td", "problem unreadable", ["cannot be read: " + (run.problem || "")]); why.colSpan = 6;
    tr.appendChild(why);
    return tr;
  }
  tr.appendChild(el("td", "num", [pct(run.pass_rate), run.pass_rate_interval ? el("div", "muted", [pct(run.pass_rate_interval[0]) + "–" + pct(run.pass_rate_interval[1])]) : null]));
  tr.appendChild(el("td", null, STATUSES.filter(function(st){ return s[st]; }).map(function(st){ return el("span", "badge s-" + st, [s[st] + " " + st]); })
    .concat(run.state === "running" ? [el("div", "s-running progress", ["running: " + run.done + " case(s) done so far"])] : [])
    .concat(run.state === "incomplete" ? [el("div", "s-incomplete", [run.problem])] : [])));
  tr.appendChild(el("td", "num", [s.duration_s === undefined ? "—" : s.duration_s.toFixed(1) + "s"]));
  var usage = s.model_usage || {};
  tr.appendChild(el("td", null, [usage.calls ? (usage.cost_usd !== null && usage.cost_usd !== undefined ? "$" + usage.cost_usd.toFixed(4) : "cost unknown") +
    " · " + ((usage.prompt_tokens || 0) + (usage.completion_tokens || 0)) + " tokens" : "no model calls"]));
  tr.appendChild(el("td", "mono", [run.git ? run.git.slice(0, 10) : "—"]));
  tr.appendChild(el("td", null, [older ? a("#/compare/" + enc(older.id) + "/" + enc(run.id), ["vs previous"], "vs-previous") : null]));
  return tr;
}
function selectionText(run){
  var sel = run.selection || {}, parts = [(run.paths || []).join(", ") || "—"];
  if ((sel.filters || []).length) parts.push("-k " + sel.filters.join(" -k "));
  if ((sel.tags || []).length) parts.push("--tag " + sel.tags.join(" --tag "));
  if (sel.only) parts.push("--last-failed (" + sel.only.length + ")");
  if (run.shard) parts.push("shard " + run.shard);
  if ((run.merged_from || []).length) parts.push("merged from " + run.merged_from.length + " shards");
  return parts.join(" · ");
}

// ------------------------------------------------------------------ one run
function problemFirst(rows){
  var order = rows.map(function(_, i){ return i; });
  order.sort(function(x, y){ return (own(RANK, rows[x].status) ? RANK[rows[x].status] : 0) - (own(RANK, rows[y].status) ? RANK[rows[y].status] : 0) || x - y; });
  return order;
}
function runPage(id){
  var token = begin("run", [[id]]);
  api.run(id).then(function(run){
    var h = run.header || {}, s = h.summary || {};
    var nodes = [el("h1", null, ["Run " + id]), runFacts(run)];
    if (!run.finished) nodes.push(el("div", "warn running", ["This run is still going (or was stopped): " + run.rows.length + " case(s) finished so far."]));
    if (run.matrix) nodes.push(matrixGrid(id, run));
    var mine = kept.run && kept.run.id === id ? kept.run : (kept.run = {id: id, shown: {}, query: ""});
    var shown = mine.shown; STATUSES.forEach(function(st){ if (!own(shown, st)) shown[st] = true; });
    var boxes = STATUSES.map(function(st){
      var box = el("input"); box.type = "checkbox"; box.checked = shown[st]; box.value = st; box.className = "status-filter";
      box.addEventListener("change", function(){ shown[st] = box.checked; filter(); });
      return el("label", "s-" + st, [box, " " + st + " (" + (s[st] || 0) + ")"]);
    });
    var search = el("input"); search.type = "search"; search.placeholder = "search id, tag, description, reason…"; search.id = "case-search";
    search.setAttribute("aria-label", "search cases");
    var count = el("span", "muted", []); count.id = "case-count";
    var body = el("tbody"), more = el("button", null, ["show more"]); more.id = "more";
    var order = problemFirst(run.rows), matching = [], drawn = 0;
    function filter(){
      var q = search.value.trim().toLowerCase();
      matching = order.filter(function(i){
        var r = run.rows[i];
        if (own(shown, r.status) && !shown[r.status]) return false;
        return !q || [r.key, r.description || "", (r.tags || []).join(" "), r.source || "", reasonsOf(r).join(" ")].join("\n").toLowerCase().indexOf(q) >= 0;
      });
      body.textContent = ""; drawn = 0; drawMore();
    }
    function drawMore(){
      var end = Math.min(drawn + BATCH, matching.length);
      for (; drawn < end; drawn++) body.appendChild(caseRow(id, run.rows[matching[drawn]]));
      count.textContent = matching.length + " of " + run.rows.length + " cases shown" + (drawn < matching.length ? " (" + drawn + " listed)" : "");
      more.hidden = drawn >= matching.length;
      markOverflow();
    }
    more.addEventListener("click", drawMore);
    search.value = mine.query;
    search.addEventListener("input", function(){ mine.query = search.value; filter(); });
    var heads = ["status", "case", "file", "why", {text: "completion", cls: "num"}, {text: "time", cls: "num"}];
    var tbl = el("table", "cases", [el("thead", null, [el("tr", null, heads.map(function(x){ return el("th", x.cls || null, [x.text || x]); }))]), body]);
    nodes.push(el("h2", null, ["Cases"]), el("div", "toolbar", boxes.concat([search, count])), scroller(tbl), el("div", null, [more]));
    if (done(token, nodes)) filter();
    if (!run.finished && !EXPORT) refreshLater(token, function(){ runPage(id); }, 3000);
  }, function(err){ failed(token, err); });
}
function runFacts(run){
  var h = run.header || {}, s = h.summary || {}, chips = el("div", "chips", []);
  var decided = (s.passed || 0) + (s.failed || 0);
  chips.appendChild(el("div", "chip", [el("span", "muted", ["pass rate"]), el("b", null, [decided ? pct(s.passed / decided) : "n/a"]), el("span", "muted", [decided ? s.passed + "/" + decided : ""])]));
  chips.appendChild(el("div", "chip", [el("span", "muted", ["cases"]), el("b", null, [String(s.total || run.rows.length)])]));
  STATUSES.forEach(function(st){ chips.appendChild(el("div", "chip s-" + st, [el("span", "muted", [st]), el("b", null, [String(s[st] || 0)])])); });
  var lines = [h.started_at ? "started " + h.started_at : null, s.duration_s !== undefined ? s.duration_s + "s" : null,
               (h.paths || []).length ? "suites " + h.paths.join(", ") : null, h.agent ? "agent " + h.agent : null,
               h.evalrun_version ? "evalrun " + h.evalrun_version : null].filter(Boolean);
  return el("div", null, [el("div", "muted", [lines.join(" · ")]), chips, s.exit_reason ? el("div", "exit-reason", ["Exit: " + s.exit_reason]) : null]);
}
function caseRow(id, r){
  var why = reasonsOf(r)[0] || r.description || "";
  var tr = el("tr", "row case", [el("td", null, [badge(r.status)]), el("td", "key", [r.key]), el("td", "muted", [r.source || ""]),
    el("td", "why", [why]), el("td", "num", [pct(r.completion)]), el("td", "num", [(r.duration_s || 0).toFixed(2) + "s"])]);
  tr.dataset.status = r.status; tr.tabIndex = 0;
  var go = function(){ location.hash = caseHref(id, r.key); };
  tr.addEventListener("click", go);
  tr.addEventListener("keydown", function(e){ if (e.key === "Enter") go(); });
  return tr;
}
function matrixGrid(id, run){
  var m = run.matrix, cols = m.columns;
  var heads = ["case"].concat(cols.map(function(c){ return {text: c, cls: "num"}; }));
  var summary = el("tr", "variant-summary", [el("td", "muted", ["pass rate · cost"])].concat(m.variants.map(function(v){
    return el("td", "num", [pct(v.pass_rate), v.cost_usd !== null && v.cost_usd !== undefined ? el("div", "muted", ["$" + Number(v.cost_usd).toFixed(4)]) : null]);
  })));
  var rows = [summary].concat(m.grid.map(function(g){
    return el("tr", g.disagree ? "disagree" : null, [el("td", "key", [g.case, g.disagree ? el("span", "badge flaky", ["variants disagree"]) : null])].concat(cols.map(function(c){
      var st = own(g.cells, c) ? g.cells[c] : "—";
      var cell = el("td", "cell", [st === "—" ? "—" : a(caseHref(id, g.case + " [" + c + "]"), [badge(st)])]);
      return cell;
    })));
  }));
  var box = el("section", "matrix", [el("h2", null, ["Matrix: a column per variant, cases where variants disagree first"]), table(heads, rows, "grid")]);
  return box;
}

// ------------------------------------------------------------------ one case of a run
function caseInRunPage(id, key){
  var token = begin("case", [[id, runHref(id)], [key]]);
  api.run(id).then(function(run){
    var at = [];
    run.rows.forEach(function(r, i){ if (r.key === key) at.push(i); });
    // a plain id in a matrix run (or with recorded runs): every result of that case
    if (!at.length) run.rows.forEach(function(r, i){ if (String(r.id) === key) at.push(i); });
    if (!at.length) throw new Error("no case '" + key + "' in run " + id);
    return Promise.all(at.map(function(i){ return fullCase(id, run, i); })).then(function(cases){
      var nodes = [el("h1", null, [key]), el("div", null, [a("#/case/" + enc(key), ["this case across runs"], "across-runs")])];
      cases.forEach(function(c){ nodes.push(caseDetail(c)); });
      done(token, nodes);
    });
  }).catch(function(err){ failed(token, err); });
}
// ------------------------------------------------------------------ two runs side by side
function comparePage(x, y){
  var token = begin("compare", [["compare " + x + " → " + y]]);
  api.compare(x, y).then(function(c){
    var nodes = [el("h1", null, ["Compare"]), el("div", null, ["old ", a(runHref(x), [x]), " → new ", a(runHref(y), [y]), el("span", "muted", [" · " + c.paired + " case(s) compared"])]),
      el("div", "gate " + (c.gate.holds ? "holds" : "fails"), [el("b", null, ["Baseline gate: "]), c.gate.said,
        c.gate.regressions.length ? el("ul", null, c.gate.regressions.map(function(r){ return el("li", null, [r]); })) : null]),
      el("div", "verdict", [c.verdict]), c.bootstrap ? el("div", "muted", [c.bootstrap]) : null];
    nodes.push(flipSection("Newly failing", "newly-failing", c.newly_failing, x, y));
    nodes.push(flipSection("Newly passing", "newly-passing", c.newly_passing, x, y));
    var changed = el("section", "changed-scores", [el("h2", null, ["Changed scores (" + c.changed_scores.length + ")"])]);
    c.changed_scores.forEach(function(s){
      changed.appendChild(el("div", "flip", [el("h3", null, [a(caseHref(y, s.case), [s.case]), " ", badge(s.status)]),
        el("div", null, Object.keys(s.metrics).map(function(n){ return n + " " + pct(s.metrics[n][0]) + " → " + pct(s.metrics[n][1]); }).join(" · ")),
        divergenceBox(s.divergence)]));
    });
    nodes.push(changed);
    if (c.metrics.length) nodes.push(el("h2", null, ["Metric means (cases scored in both)"]), table(["metric", {text: "old", cls: "num"}, {text: "new", cls: "num"}, {text: "change", cls: "num"}, {text: "cases", cls: "num"}],
      c.metrics.map(function(m){ return el("tr", null, [el("td", null, [m.name]), el("td", "num", [m.old.toFixed(3)]), el("td", "num", [m.new.toFixed(3)]), el("td", "num", [(m.delta >= 0 ? "+" : "") + m.delta.toFixed(3)]), el("td", "num", [String(m.cases)])]); })));
    if (c.only_in_old.length) nodes.push(el("div", "muted", ["only in the old run (not compared): " + c.only_in_old.join(", ")]));
    if (c.only_in_new.length) nodes.push(el("div", "muted", ["only in the new run (not compared): " + c.only_in_new.join(", ")]));
    if (c.divergences_left_out) nodes.push(el("div", "muted", [c.divergences_left_out + " more changed case(s): their conversations were not compared"]));
    done(token, nodes);
  }, function(err){ failed(token, err); });
}
function flipSection(title, cls, flips, x, y){
  var box = el("section", cls, [el("h2", null, [title + " (" + flips.length + ")"])]);
  flips.forEach(function(f){
    box.appendChild(el("div", "flip", [el("h3", null, [a(caseHref(y, f.case), [f.case]), " ", badge(f.old), " → ", badge(f.new)]),
      f.reason ? el("div", "why", [f.reason]) : null, divergenceBox(f.divergence)]));
  });
  return box;
}
// ------------------------------------------------------------------ one case across runs
function caseAcrossPage(key){
  var token = begin("history", [["case " + key]]);
  api.caseHistory(key).then(function(h){
    var strip = el("div", "strip", h.runs.slice().reverse().map(function(e){ return badge(e.status); }));
    var rows = h.runs.map(function(e){
      return el("tr", "history-row", [el("td", "mono", [(e.started_at || "").replace("T", " ").slice(0, 19)]), el("td", "key", [a(runHref(e.run), [e.run])]),
        el("td", null, [badge(e.status), e.repeat !== null && e.repeat !== undefined ? el("span", "muted", [" repeat " + e.repeat]) : null,
          e.variant ? el("span", "muted", [" " + e.variant]) : null]),
        el("td", "why", [e.reason || ""]), el("td", null, [a(caseHref(e.run, key), ["conversation"])])]);
    });
    var nodes = [el("h1", null, [key]),
      h.flaky ? el("div", null, [el("span", "badge flaky", ["flaky"]), " passed in some runs and not in others"]) : el("div", "muted", ["not flaky in these runs"]),
      el("div", "muted", ["oldest → newest: "]), strip,
      table(["when", "run", "status", "why", ""], rows, "history"),
      el("div", "muted", ["searched the newest " + h.searched + " run(s)" + (h.left_out ? "; " + h.left_out + " older run(s) not searched" : "")])];
    done(token, nodes);
  }, function(err){ failed(token, err); });
}

// ------------------------------------------------------------------ routes: #/, #/run/ID, #/run/ID/case/CASE, #/compare/A/B, #/case/CASE
function route(){
  var parts = location.hash.replace(/^#\/?/, "").split("/");
  try { parts = parts.map(decodeURIComponent); } catch (e) { parts = ["?"]; }
  if (!parts[0]) return runsPage();
  if (parts[0] === "run" && parts.length === 2) return runPage(parts[1]);
  if (parts[0] === "run" && parts.length === 4 && parts[2] === "case") return caseInRunPage(parts[1], parts[3]);
  if (parts[0] === "compare" && parts.length === 3) return comparePage(parts[1], parts[2]);
  if (parts[0] === "case" && parts.length === 2) return caseAcrossPage(parts[1]);
  failed(begin("unknown"), "no page at " + location.hash + ": the pages are #/, #/run/ID, #/run/ID/case/CASE, #/compare/OLD/NEW and #/case/CASE");
}
window.addEventListener("hashchange", route);
route();
})(evalrunView);
