"""The stylesheet of the HTML report, inlined into each file (no fonts, no network)."""

CSS = r"""
:root{--pass:#1a7f37;--fail:#cf222e;--err:#8250df;--skip:#9a6700;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
header{padding:16px 24px;border-bottom:1px solid var(--line);background:var(--bg)}
h1{font-size:20px;margin:0 0 6px}
h2{font-size:16px;margin:18px 0 8px}
h3{font-size:14px;margin:14px 0 6px}
main{padding:0 24px 40px}
.muted{color:var(--muted)}
.chips{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0}
.chip{border:1px solid var(--line);border-radius:6px;padding:6px 10px;background:#fff;min-width:92px}
.chip b{display:block;font-size:18px}
.s-passed{color:var(--pass)}.s-failed{color:var(--fail)}.s-error,.s-unscored{color:var(--err)}.s-skipped{color:var(--skip)}
.badge{display:inline-block;padding:0 6px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.badge.passed{background:var(--pass)}.badge.failed{background:var(--fail)}.badge.error,.badge.unscored{background:var(--err)}.badge.skipped{background:var(--skip)}
.warn{border-left:4px solid var(--fail);background:#fff1f0;padding:8px 12px;margin:10px 0}
.toolbar{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin:14px 0;position:sticky;top:0;background:#fff;padding:8px 0;border-bottom:1px solid var(--line);z-index:2}
.toolbar label{cursor:pointer;user-select:none}
#search{padding:5px 8px;border:1px solid var(--line);border-radius:6px;min-width:260px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--bg);font-weight:600}
tr.case{cursor:pointer}tr.case:hover{background:#f3f6fa}tr.case.open{background:#eef4ff}
td.id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere;min-width:18ch}
td.why{color:var(--muted);max-width:60ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
td.num{text-align:right;white-space:nowrap}
.detail>td{background:#fbfcfd;padding:12px 16px 20px}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
.box{border:1px solid var(--line);border-radius:6px;padding:8px 10px;background:#fff;margin-bottom:8px}
.box.ok{border-left:4px solid var(--pass)}.box.bad{border-left:4px solid var(--fail)}.box.meh{border-left:4px solid var(--skip)}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;background:var(--bg);padding:6px 8px;border-radius:4px}
ul.reasons{margin:4px 0 8px;padding-left:20px}ul.reasons li{margin:2px 0}
.chat{display:flex;flex-direction:column;gap:6px;max-width:980px}
.msg{border-radius:8px;padding:6px 10px;max-width:85%;border:1px solid var(--line)}
.msg .who{font-size:11px;font-weight:600;color:var(--muted);text-transform:uppercase}
.msg.user{align-self:flex-end;background:#ddf4ff}
.msg.assistant{align-self:flex-start;background:#fff}
.msg.tool{align-self:flex-start;background:#fff8c5;margin-left:24px}
.msg.system{align-self:center;background:var(--bg)}
.msg .text{white-space:pre-wrap;word-break:break-word}
table.args td,table.args th{font-size:12.5px}
tr.mismatch td{background:#fff1f0}
.more{margin:12px 0}
button{font:inherit;padding:4px 10px;border:1px solid var(--line);border-radius:6px;background:#fff;cursor:pointer}
.badge.regressed{background:#fff;color:var(--fail);border:1px solid var(--fail);margin-left:4px}
.badge.fixed{background:#fff;color:var(--pass);border:1px solid var(--pass);margin-left:4px}
tr.case.regressed td:first-child{box-shadow:inset 4px 0 0 var(--fail)}
.scroll-x{overflow-x:auto;width:0;min-width:100%}
.case-detail{overflow-wrap:break-word}
a.case-link{font-size:12px;margin-left:8px}
#matrix{padding:8px 24px}
.grid-scroll{overflow-x:auto;max-width:100%;border:1px solid var(--line)}
#matrix-grid th,#matrix-grid td{padding:4px 10px;white-space:nowrap;text-align:left}
#matrix-grid tr.differs th{font-weight:700}
@media (max-width:700px){
  header{padding:12px}
  #matrix{padding:8px}
  main{padding:0 8px 32px}
  #search{min-width:0;flex:1 1 100%}
  th.col-file,td.col-file,th.col-why,td.col-why,th.col-time,td.col-time{display:none}
  td.id{min-width:0}
  table.args{min-width:720px}
  .detail>td{padding:8px 4px 16px}
  .msg{max-width:100%}
  .msg.tool{margin-left:12px}
}
"""
