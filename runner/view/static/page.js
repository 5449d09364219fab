// evalrun view: the helpers every page of the app builds with (runner/view; app.js draws the pages).
// Everything shown came from runs and may have been written by the agent under test: every string
// becomes a text node (el() below), never markup; control and bidi characters are shown as \uXXXX.
var evalrunView = (function(){
"use strict";
var STATUSES = ["passed", "failed", "error", "unscored", "skipped"];
var INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
function visible(text){
  return text.replace(INVISIBLE, function(ch){ return "\\u" + ("000" + ch.charCodeAt(0).toString(16)).slice(-4); });
}
function el(tag, cls, children){
  var node = document.createElement(tag);
  if (cls) node.className = cls;
  (children || []).forEach(function(child){
    if (child === null || child === undefined || child === false) return;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(visible(String(child))));
  });
  return node;
}
function own(object, key){ return object !== null && typeof object === "object" && Object.prototype.hasOwnProperty.call(object, key); }
function enc(text){ return encodeURIComponent(text); }
function a(href, children, cls){ var node = el("a", cls, children); node.href = href; return node; }
function runHref(id){ return "#/run/" + enc(id); }
function caseHref(id, key){ return "#/run/" + enc(id) + "/case/" + enc(key); }
function pct(v){ return v === null || v === undefined ? "—" : (v * 100).toFixed(1) + "%"; }
function badge(status, extra){ return el("span", "badge s-" + String(status).replace(/[^a-z]/g, "") + (extra ? " " + extra : ""), [status]); }
function show(value){ return value === undefined ? "—" : typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value, null, 1); }
function table(headings, rows, cls){
  var head = el("tr", null, headings.map(function(h){ return el("th", h.cls || null, [h.text || h]); }));
  return scroller(el("table", cls || null, [el("thead", null, [head]), el("tbody", null, rows)]));
}
// A wide block scrolls in its own box, with a cue below it when it does (markOverflow).
function scroller(inner){
  var wrap = document.createDocumentFragment();
  wrap.appendChild(el("div", "scroll-x", [inner]));
  wrap.appendChild(el("div", "scroll-cue", ["\u21c6 scroll sideways for more"]));
  return wrap;
}
function markOverflow(){
  document.querySelectorAll(".scroll-x").forEach(function(box){
    box.classList.toggle("overflowing", box.scrollWidth > box.clientWidth + 1);
  });
}
window.addEventListener("resize", markOverflow);
function reasonsOf(c){
  if (c.status === "failed") return c.failures && c.failures.length ? c.failures : ["failed"];
  if (c.status === "error") return [c.error || "ended in error"];
  if (c.status === "unscored") return [c.unscored_reason || "could not be scored"];
  if (c.status === "skipped") return [c.skip_reason || "skipped"];
  return [];
}
return {STATUSES: STATUSES, visible: visible, el: el, own: own, enc: enc, a: a, runHref: runHref, caseHref: caseHref, pct: pct, badge: badge, show: show, table: table, scroller: scroller, markOverflow: markOverflow, reasonsOf: reasonsOf};
})();
