/** The HTML report's stylesheet, inlined into the page (the Content-Security-Policy allows no external style). */
export const STYLE = `
:root{--ink:#1b1e2b;--muted:#6b7084;--line:#e3e5ee;--bg:#f5f6fa;--card:#fff;--accent:#5b4bd6}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
header{background:#14172b;color:#fff;padding:22px 32px}
header h1{margin:0 0 4px;font-size:22px;font-weight:650;letter-spacing:.2px}
header p{margin:0;color:#c4c7dc}
header code{color:#fff}
header a{color:#c9c2ff}
section{margin:22px 32px}
h2{font-size:16px;margin:0 0 10px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.warn{margin:18px 32px 0;padding:10px 14px;border-radius:8px;background:#fff4dc;border:1px solid #f0cf83;color:#6b4a00}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.card .label{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.5px}
.card .value{font-size:24px;font-weight:650;margin-top:2px}
.card .note{color:var(--muted);font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(490px,100%),1fr));gap:12px}
figure{margin:0;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
figcaption{display:flex;flex-direction:column;margin-bottom:6px}
figcaption span{color:var(--muted);font-size:12px}
svg.chart{width:100%;height:auto;display:block}
.grid{stroke:var(--line);stroke-width:1}
.tick{fill:var(--muted);font-size:11.5px}
.axis{fill:var(--muted);font-size:12px}
.count{fill:#fff;font-size:11.5px;font-weight:700;pointer-events:none}
.dot{stroke:#fff;stroke-width:1.5;opacity:.9}
.lat{fill:none;stroke:var(--accent);stroke-width:1.6}
.probe{fill:var(--accent)}
.down{fill:#c63d3d}
.outcome{stroke:#fff;stroke-width:1}
.tablewrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:10px}
table{border-collapse:collapse;width:100%}
th,td{padding:7px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfd}
tbody tr:last-child td{border-bottom:0}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.subject a{color:var(--ink);font-weight:600;text-decoration:none}
td.subject a:hover{text-decoration:underline}
.uaid{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px;color:var(--muted);word-break:break-all}
.badge{display:inline-block;margin-left:6px;padding:0 6px;border-radius:9px;background:#eceafd;color:#3d30a8;font-size:11px}
.bar{display:inline-block;width:44px;height:8px;border-radius:4px;background:#eceef4;vertical-align:middle;overflow:hidden}
.bar .fill{display:block;height:100%}
.barval{margin-left:8px;font-variant-numeric:tabular-nums;font-weight:600}
td.score .barval{font-size:15px}
td.score,td.conf{white-space:nowrap}
.rank .uaid{overflow-wrap:anywhere}
td.subject{min-width:15em}
.shared{color:var(--muted);font-size:12px;margin-top:6px}
.shared ul{margin:2px 0 0;padding-left:18px}
.chip{display:inline-block;padding:0 6px;border-radius:9px;font-size:11px;font-weight:500}
.chip.stale{background:#fff1d6;color:#8a5a00}
.chip.na{background:#eef0f5;color:#555a6d}
.chip.none{background:#eef0f5;color:#555a6d}
.chip.missing{background:#fde4e4;color:#9b2c2c}
.legend{color:var(--muted);font-size:12px}
.muted{color:var(--muted)}
.details{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(680px,100%),1fr));gap:12px}
article svg.chart{max-width:720px}
article{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;min-width:0}
.ahead{display:flex;justify-content:space-between;align-items:center;gap:8px}
article h3{margin:0;font-size:15px;word-break:break-all}
.pill{color:#fff;font-weight:650;border-radius:12px;padding:2px 10px;font-variant-numeric:tabular-nums}
table.comps{margin:8px 0;font-size:12.5px}
table.comps td,table.comps th{padding:4px 8px}
.sub{margin-top:10px;font-weight:600;font-size:12.5px}
.keys{display:flex;flex-wrap:wrap;gap:10px;color:var(--muted);font-size:11.5px}
.key i{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:4px;vertical-align:-1px}
.empty{color:var(--muted);font-size:12px;margin:4px 0}
.method dl,.explain dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px;background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;margin:0}
.method dt,.explain dt{color:var(--muted)}
.method dd,.explain dd{margin:0;min-width:0;overflow-wrap:anywhere}
footer{margin:26px 32px 30px;color:var(--muted);font-size:12px}
.oc{display:inline-block;padding:0 7px;border-radius:9px;font-size:11.5px;font-weight:600;color:#fff;white-space:nowrap}
.oc.correct,.oc.reachable{background:#12845a}.oc.wrong{background:#c63d3d}.oc.unparseable{background:#a35a12}
.oc.timeout{background:#6b7084}.oc.unreachable{background:#4a4f63}.oc.error{background:#7a2e8a}.oc.not-measured{background:#e3e5ee;color:#4a4f63}
.reason{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11px;color:#9b2c2c}
.lo{display:block;margin:1px 0}
.lo .sig{color:var(--muted);font-size:11.5px}
.formula{font-size:13px;overflow-wrap:anywhere}
p.formula{margin:8px 0 2px}
.conftext{margin:0 0 4px;color:var(--muted);font-size:12.5px}
.tablewrap.flat{border:0;border-radius:0;background:none}
.nowrap{white-space:nowrap}
details.signals{margin-top:12px}
details.signals summary{cursor:pointer;font-weight:600;font-size:12.5px}
table.sigs{font-size:12px}
table.sigs td,table.sigs th{padding:3px 8px}
.explain sub{font-size:11px}
/* A chart's text scales with the chart: where charts are drawn smaller than their own size, their text is set larger. */
@media (max-width:600px){
svg.hist text,svg.scatter text{font-size:16px}
svg.chart:not(.hist):not(.scatter) text{font-size:19px}
}
@media (max-width:640px){
table.stack,table.stack tbody,table.stack tr,table.stack td{display:block}
table.stack thead{display:none}
table.stack tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:2px 12px;padding:6px 8px;border-bottom:1px solid var(--line)}
table.stack td{border:0;padding:1px 0;text-align:left;min-width:0}
table.stack td[data-label]::before{content:attr(data-label) " ";color:var(--muted);font-size:11px;font-weight:400}
table.rank td.subject,table.rank td.outcomes{flex-basis:100%}
table.rank .lo{display:inline-block;margin-right:10px}
table.rank td.subject{overflow-wrap:anywhere}
header{padding:16px}
section{margin:16px 10px}
.warn{margin:12px 10px 0}
footer{margin:20px 10px}
.method dl,.explain dl{grid-template-columns:1fr}
article{padding:12px 10px}
}
`;
