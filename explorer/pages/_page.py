"""The self-contained static page of a report (``explorer.html``, ``explorer.save_html``,
``pt2-explorer ... --html``): the header (the summary), then one tab per view of the registry
(``views/_registry.py``) whose facts the report holds, each the view's HTML (``lower/_html.py`` and the
views' modules). No network, no external files: the graph component and, where a benchmark
is shown, plotly.js are inlined once."""

from __future__ import annotations

from compiler import Report
from compiler.analysis import verdict

from ..base._types import ExplorerView, opening_compile
from ..diffs._pagediffs import page_css
from ..graph._view import graph_script
from ..lower._html import HIGHLIGHT_BUNDLE, browser_highlighting, esc, stylesheet
from ..lower._pagelines import FILL_JS
from ..views._registry import Subject, headers, opening, tabs

_PAGE_JS = (
    FILL_JS
    + """
const hl=r=>{if(window.pt2xHighlight)window.pt2xHighlight(r);};
document.addEventListener('toggle',e=>hl(e.target),true);
document.querySelectorAll('.pt2x-tabs button').forEach(b=>b.addEventListener('click',()=>{
 document.querySelectorAll('.pt2x-tab').forEach(t=>t.hidden=t.id!==b.dataset.tab);
 document.querySelectorAll('.pt2x-tabs button').forEach(x=>x.classList.toggle('on',x===b));
 hl(document.getElementById(b.dataset.tab));}));
const sel=document.getElementById('pt2x-compile');
const show=()=>document.querySelectorAll('.pt2x-compile').forEach(d=>{d.hidden=d.dataset.id!==sel.value;if(!d.hidden)hl(d);});
if(sel){sel.addEventListener('change',show);show();}
hl(document);
document.querySelectorAll('.pt2x table').forEach(t=>{const h=t.tHead,b=t.tBodies[0];if(!h||!b)return;
 [...h.rows[0].cells].forEach((th,i)=>{th.classList.add('pt2x-sort');th.title='sort by this column';
 th.addEventListener('click',()=>{const rs=[...b.rows],v=r=>(r.cells[i]?r.cells[i].textContent.trim():''),
 num=rs.every(r=>v(r)===''||!isNaN(parseFloat(v(r)))),d=th.dataset.sort==='desc'?1:-1;
 h.querySelectorAll('th').forEach(x=>delete x.dataset.sort);th.dataset.sort=d>0?'asc':'desc';
 rs.sort((a,c)=>d*(num?(parseFloat(v(a)||'-Infinity')-parseFloat(v(c)||'-Infinity')):v(a).localeCompare(v(c))));
 rs.forEach(r=>b.appendChild(r));});});});
document.querySelectorAll('a.cid').forEach(a=>a.addEventListener('click',()=>{
 sel.value=a.dataset.compile;show();document.querySelector('[data-tab=tab-compiles]').click();}));
const flash=el=>{el.scrollIntoView({block:'center'});el.classList.add('pt2x-flash');setTimeout(()=>el.classList.remove('pt2x-flash'),2500);};
document.querySelectorAll('a.pt2x-why-link').forEach(a=>a.addEventListener('click',e=>{e.preventDefault();
 if(a.dataset.break!==undefined){document.querySelector('[data-tab=tab-breaks]').click();
  const d=document.getElementById('break-'+a.dataset.break);if(d)flash(d);return;}
 if(!sel)return;sel.value=a.dataset.compile;show();document.querySelector('[data-tab=tab-compiles]').click();
 const box=[...document.querySelectorAll('.pt2x-compile')].find(d=>d.dataset.id===a.dataset.compile);if(!box)return;
 const find=k=>[...box.querySelectorAll('a.'+k)].find(x=>x.dataset.kernel===a.dataset.kernel);
 const code=find('pt2x-code-link'),nodes=find('pt2x-kernel-link');if(nodes){const fuse=[...box.querySelectorAll('details > summary')].find(s=>s.textContent.trim()==='fuse');
  if(fuse){fuse.parentElement.open=true;fuse.parentElement.querySelector('.pt2x-graph')?.scrollIntoView({block:'center'});}
  setTimeout(()=>nodes.click(),200);}
 if(!code)return;
 const t0=Date.now(),then=()=>{const shown=[...box.querySelectorAll('.pt2x-gv')].some(g=>g.dataset.kernel===a.dataset.kernel);
  if(shown||!nodes||Date.now()-t0>4000)code.click();else setTimeout(then,100);};then();}));
"""
)
_TAB_CSS = (
    ".pt2x .pt2x-tabs button{margin:6px 4px 6px 0}.pt2x .pt2x-tabs button.on{font-weight:700}"
    ".pt2x th.pt2x-sort{cursor:pointer}.pt2x th[data-sort=desc]::after{content:' ▼'}"
    ".pt2x th[data-sort=asc]::after{content:' ▲'}"
)


def page_html(subject: Subject | ExplorerView, *, graphs: bool = False) -> str:
    """The page of ``subject`` (or of the report an ``ExplorerView`` was built from), each
    table sorted by a click on a column's header (largest first, then smallest): it
    opens on the most informative tab (``_registry.opening``); its compiles tab on the
    compile with the most work (``_view.opening_compile``). ``graphs``: the graph component
    inlined once where the page shows a graph (``graph._view.graph_script``; put in as the page
    is made: a big log's page is ~80 MB, each copy of it a fraction of a second)."""
    s = subject if isinstance(subject, Subject) else Subject(subject.report, view=subject)
    view = s.view
    s.lazy_code = browser_highlighting()  # code as text, highlighted in the browser (a fresh subject)
    first = opening(s.report)
    if s.compile is None:
        cv = opening_compile(view)
        s.compile = cv.compile_id if cv else None
    shown = tabs(s.report)
    buttons = "".join(
        f'<button data-tab="tab-{v.name}" class="{"on" if v.name == first else ""}">{esc(v.tab(s.report))}</button>'
        for v in shown
    )
    sections = "".join(
        f'<section class="pt2x-tab" id="tab-{v.name}"{"" if v.name == first else " hidden"}>{v.html(s)}</section>'
        for v in shown
    )
    head = "".join(v.html(s) for v in headers()) + verdict_head(s.report)
    body = f'<div class="pt2x">{head}<div class="pt2x-tabs">{buttons}</div>{sections}</div>'
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {esc(view.summary.title)}</title>'
        f"<style>{stylesheet()}{_TAB_CSS}{page_css(body)}</style></head><body>{body}"
        f"{_highlight_script(body)}<script>{_PAGE_JS}</script>{graph_script(body) if graphs else ''}</body></html>"
    )


def verdict_head(report: Report) -> str:
    """The header's verdict: each benchmark's headline (``compiler.analysis.verdict``), the Why tab
    saying the rest; "" without a benchmark."""
    if not report.benchmarks:
        return ""
    lines = "".join(
        f"<div><b>Why not faster</b> · {esc(b.name)}: {esc(verdict(report, b).headline)}</div>"
        for b in report.benchmarks
    )
    return f'<div class="pt2x-verdict">{lines}</div>'


def _highlight_script(body: str) -> str:
    """highlight.js (extension/src/highlight), once, where a code block waits for it
    (``_html.code_html``: ``<pre data-lang=...>``)."""
    if "<pre data-lang=" not in body:
        return ""
    text = HIGHLIGHT_BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")  # as bundle_text
    return f"<script>{text}</script>"


def report_html(report: Report, title: str | None = None) -> str:
    """The page of ``report``, with the graph component inlined where it shows a graph."""
    return page_html(Subject(report, title), graphs=True)
