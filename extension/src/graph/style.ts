/** The graph view's stylesheet, added once per document; every rule under .pt2x-gv. */
export const CSS = `
.pt2x-gv{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:12px;color:#1f2328;max-width:100%;min-width:0}
.pt2x-gv-bar{display:flex;flex-wrap:wrap;align-items:center;gap:4px;margin:4px 0}
.pt2x-gv-search{width:22em;max-width:100%;font-size:12px;padding:2px 4px}
.pt2x-gv-btn{font-size:12px;padding:1px 8px;cursor:pointer}
.pt2x-gv-hits,.pt2x-gv-status{color:#57606a;margin:0 6px}
.pt2x-gv-main{display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start;max-width:100%}
.pt2x-gv-stage{position:relative;flex:1 1 480px;min-width:0;height:560px;overflow:hidden;border:1px solid #d0d7de;background:#fff;cursor:grab}
.pt2x-gv-svg{display:block;width:100%;height:100%}
.pt2x-gv-info{flex:0 1 300px;min-width:200px;max-height:560px;overflow:auto;word-break:break-word}
.pt2x-gv-info a{color:#0969da;cursor:pointer}
.pt2x-gv-note{color:#57606a;font-style:italic}
.pt2x-gv-error{color:#cf222e;font-weight:600}
.pt2x-gv-row{border-collapse:collapse}
.pt2x-gv-row th,.pt2x-gv-row td{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top;font-size:12px}
.pt2x-gv-row th{background:#f6f8fa;white-space:nowrap}
.pt2x-gv-row td{font-family:ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap}
.pt2x-gv text{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;fill:#1f2328}
.pt2x-gv-node,.pt2x-gv-box{cursor:pointer}
.pt2x-gv-node rect{fill:#fff;stroke:#444;stroke-width:1}
.pt2x-gv-op-placeholder rect{fill:#dbeafe}
.pt2x-gv-op-get_attr rect{fill:#fef3c7}
.pt2x-gv-op-output rect{fill:#e5e7eb;stroke-width:2}
.pt2x-gv-box rect{fill:#eef2f7;stroke:#57606a;stroke-width:1.5}
.pt2x-gv-box:hover rect,.pt2x-gv-node:hover rect{stroke:#0969da}
.pt2x-gv-cluster rect{fill:rgba(9,105,218,0.03);stroke:#8c959f;stroke-dasharray:4 3}
.pt2x-gv-cluster text{cursor:pointer;fill:#57606a}
.pt2x-gv-edges path{fill:none;stroke:#666;stroke-width:1;pointer-events:none}
.pt2x-gv-cluster rect{pointer-events:none}
.pt2x-gv-arrowhead{fill:#666}
.pt2x-gv .pt2x-gv-hit rect{stroke:#bf8700;stroke-width:2}
.pt2x-gv .pt2x-gv-selected rect{stroke:#cf222e;stroke-width:3}
.pt2x-gv-hint{color:#57606a;font-style:italic}
.pt2x-gv-far .pt2x-gv-nodes text,.pt2x-gv-far .pt2x-gv-clusters text,.pt2x-gv-far .pt2x-gv-ports text{display:none}
.pt2x-gv:not(.pt2x-gv-far) .pt2x-gv-labels{display:none}
.pt2x-gv .pt2x-gv-label{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-weight:600;fill:#1f2328;stroke:#fff;paint-order:stroke;cursor:pointer}
.pt2x-gv .pt2x-gv-label-box{pointer-events:none}
.pt2x-gv-port{cursor:pointer}
.pt2x-gv-port rect{fill:#fff7e6;stroke:#bf8700;stroke-width:1}
.pt2x-gv-port-reads rect{fill:#fbefff;stroke:#8250df}
.pt2x-gv .pt2x-gv-port text{font-size:8px}
.pt2x-gv-mini{position:absolute;right:4px;bottom:4px;background:rgba(255,255,255,0.92);border:1px solid #d0d7de;cursor:pointer}
.pt2x-gv-mini-cluster{fill:rgba(9,105,218,0.05);stroke:#8c959f;stroke-width:0.5;vector-effect:non-scaling-stroke}
.pt2x-gv-mini-leaf{fill:#8c959f}
.pt2x-gv-mini-view{fill:rgba(9,105,218,0.12);stroke:#0969da;stroke-width:1.5;vector-effect:non-scaling-stroke}
.pt2x-gv-link{font:inherit;font-family:ui-monospace,Menlo,Consolas,monospace;color:#0969da;background:none;border:none;padding:0;text-decoration:underline;cursor:pointer}
`;
