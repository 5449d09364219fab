// evalrun view: one case drawn whole (its reasons, checks, goals, argument verdicts, calls, conversation) and
// the first divergence of two conversations, side by side. Text nodes only (page.js).
(function(V){
"use strict";
var visible = V.visible, el = V.el, own = V.own, enc = V.enc, a = V.a, runHref = V.runHref, caseHref = V.caseHref, pct = V.pct, badge = V.badge, show = V.show, table = V.table, scroller = V.scroller, markOverflow = V.markOverflow, reasonsOf = V.reasonsOf;
function caseDetail(c){
  var box = el("section", "case-detail", [el("div", null, [badge(c.status), " ", el("span", "muted", [c.source || ""]),
    c.repeat !== null && c.repeat !== undefined ? el("span", "muted", [" · repeat " + c.repeat]) : null,
    c.variant ? el("span", "muted", [" · variant " + c.variant]) : null,
    c.conversation_source ? el("span", "muted", [" · conversation: " + c.conversation_source]) : null])]);
  if (c.description) box.appendChild(el("p", null, [c.description]));
  if ((c.tags || []).length) box.appendChild(el("div", "muted", ["tags: " + c.tags.join(", ")]));
  var why = reasonsOf(c);
  if (why.length) box.appendChild(el("div", null, [el("h3", null, [c.status === "failed" ? "Why it failed" : "What happened"]), el("ul", "why-failed", why.map(function(w){ return el("li", null, [w]); }))]));
  if ((c.extra_calls || []).length) box.appendChild(el("div", "warn", ["extra calls: " + c.extra_calls.join(", ")]));
  (c.judge_fallbacks || []).forEach(function(w){ box.appendChild(el("div", "warn", ["Decided without the judge: " + w])); });
  (c.notes || []).forEach(function(w){ box.appendChild(el("div", "muted", ["Note: " + w])); });
  if (c.metrics) box.appendChild(el("div", "muted", ["journey completion " + pct(c.metrics.journey_completion) + " · tool-call precision " + pct(c.metrics.tool_call_precision) + " · recall " + pct(c.metrics.tool_call_recall) + " · turns " + c.metrics.turns]));
  if ((c.checks || []).length) box.appendChild(checks(c.checks));
  if ((c.goals || []).length) box.appendChild(goals(c.goals));
  var verdicts = argumentVerdicts(c.goals || []);
  if (verdicts) box.appendChild(verdicts);
  if ((c.calls || []).length) box.appendChild(el("div", "calls", [el("h3", null, ["Tool calls"])].concat(c.calls.map(function(call){
    return el("div", call.role === "goal" ? "box ok" : call.role === "ignored_failed" ? "box meh" : "box bad", [
      el("div", null, ["#" + (call.index + 1) + " ", el("b", null, [call.tool_name]), el("span", "muted", ["  message " + call.message + " · " + String(call.role).replace("_", " ") + (call.goal ? " → " + call.goal : "")])]),
      el("pre", null, [show(call.arguments)]), call.note ? el("div", "muted", [call.note]) : null]);
  }))));
  if ((c.transcript || []).length) box.appendChild(el("div", null, [el("h3", null, ["Conversation" + (c.termination_reason ? " (ended: " + c.termination_reason + ")" : "")]), chat(c.transcript)]));
  return box;
}
function checks(list){
  var rows = list.map(function(k){
    return el("tr", "check s-row-" + k.status, [el("td", null, [k.name, k.gate === false ? el("div", "muted", ["(does not gate)"]) : null]), el("td", null, [k.type]),
      el("td", null, [badge(k.status)]), el("td", "num", [k.score === null || k.score === undefined ? "—" : k.score.toFixed(3)]),
      el("td", "num", [k.threshold === null || k.threshold === undefined ? "—" : k.threshold.toFixed(3)]),
      el("td", "why", [k.explanation || "", k.evidence && Object.keys(k.evidence).length ? el("details", null, [el("summary", null, ["evidence"]), el("pre", null, [show(k.evidence)])]) : null])]);
  });
  return el("div", "checks", [el("h3", null, ["Checks (every one, passing too)"]), table(["check", "type", "verdict", {text: "score", cls: "num"}, {text: "threshold", cls: "num"}, "why (the judge's reasoning)"], rows)]);
}
function goals(list){
  return el("div", "goals", [el("h3", null, ["Goals"])].concat(list.map(function(g){
    var d = g.text_decision;
    return el("div", g.achieved ? "box ok" : "box bad", [el("b", null, [g.name]), " ", el("span", "muted", [g.type]), " ", badge(g.achieved ? "achieved" : String(g.status).replace("_", " ")),
      el("div", null, [g.explanation]),
      (g.missing_keywords || []).length ? el("div", null, ["missing keywords: " + g.missing_keywords.join(", ")]) : null,
      d ? el("div", "muted", ["decided by " + d.decided_by + (d.score !== null && d.score !== undefined ? " (score " + d.score.toFixed(3) + ")" : "") + (d.reason ? ": " + d.reason : "")]) : null,
      d && d.judge_failure ? el("div", "s-failed", ["judge failed: " + d.judge_failure]) : null]);
  })));
}
function argumentVerdicts(list){
  var rows = [];
  list.forEach(function(g){ (g.attempts || []).forEach(function(at){ (at.arguments || []).forEach(function(v){
    rows.push(el("tr", v.matched ? null : "mismatch", [el("td", null, [g.name + " (call #" + (at.call_index + 1) + ")"]), el("td", null, [el("code", null, [v.path])]),
      el("td", null, [v.mode]), el("td", null, [el("code", null, [show(v.expected)])]), el("td", null, [el("code", null, [v.present ? show(v.actual) : "(absent)"])]),
      el("td", v.matched ? "s-passed" : "s-failed", [v.matched ? "match" : "mismatch"]), el("td", "decided-by", [v.decided_by]),
      el("td", "num", [v.score === null || v.score === undefined ? "—" : v.score.toFixed(3)]),
      el("td", "why", [v.reason || "", v.judge_failure ? el("div", "s-failed", ["judge failed: " + v.judge_failure]) : null])]));
  }); }); });
  if (!rows.length) return null;
  return el("div", "arg-verdicts", [el("h3", null, ["Arguments"]), table(["goal", "argument", "mode", "expected", "actual", "verdict", "decided by", {text: "score", cls: "num"}, "why"], rows)]);
}
function content(value){
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(function(p){ return p && typeof p.text === "string" ? p.text : JSON.stringify(p); }).join("\n");
  return JSON.stringify(value, null, 1);
}
function chat(messages, mark){
  var box = el("div", "chat", []);
  messages.forEach(function(m, n){
    m = m && typeof m === "object" ? m : {role: "message", content: m};
    var role = typeof m.role === "string" ? m.role : "message";
    var cls = ["user", "assistant", "tool", "system"].indexOf(role) >= 0 ? role : "system";
    var parts = [el("div", "who", [(n + 1) + " · " + role + (m.name ? " · " + m.name : "")])];
    var text = content(m.content);
    if (text) parts.push(el("div", "text", [text]));
    (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach(function(call){
      var f = call && call["function"] ? call["function"] : call || {};
      parts.push(el("pre", null, ["→ " + (f.name || "?") + "(" + (typeof f.arguments === "string" ? f.arguments : JSON.stringify(f.arguments)) + ")"]));
    });
    box.appendChild(el("div", "msg " + cls + (mark === n + 1 ? " diverges" : ""), parts));
  });
  return box;
}

function divergenceBox(d){
  if (!d) return el("div", "muted", ["(the conversations were not compared)"]);
  if (d.same) return el("div", "muted divergence-none", ["The two conversations are the same step for step: the change is in the scoring."]);
  return el("div", "divergence", [el("div", "what", ["First divergence, step " + (d.step + 1) + ": " + d.what]),
    el("div", "cols", [el("div", "side old", [el("div", "muted", ["old run"]), stepView(d.a)]), el("div", "side new", [el("div", "muted", ["new run"]), stepView(d.b)])])]);
}
function stepView(step){
  if (!step) return el("div", "box meh", ["(nothing: the conversation had ended)"]);
  var head = "message " + step.message + " · " + step.role;
  if (step.kind === "tool_call") return el("div", "box bad step", [el("div", "muted", [head]), el("b", null, ["→ " + step.tool]), el("pre", null, [show(step.arguments)])]);
  if (step.kind === "tool_result") return el("div", "box bad step", [el("div", "muted", [head + " · result of " + (step.tool || "a tool")]), el("pre", null, [step.text])]);
  return el("div", "box bad step", [el("div", "muted", [head]), el("div", "text", [step.text])]);
}

V.caseDetail = caseDetail;
V.divergenceBox = divergenceBox;
})(evalrunView);
