/**
 * Links between a graph's nodes, the kernels they were fused into and the tables that list
 * them, on the static page and in JupyterLab alike (the tables are HTML the explorer writes,
 * explorer/lower/_html.py; scripts do not run inside them, so one listener on the document serves
 * every link):
 * - ``a.pt2x-node-link[data-node][data-kernel]``: select that node in the graph that fused it;
 * - ``a.pt2x-kernel-link[data-kernel]``: select the kernel's nodes in the fuse graph;
 * - ``a.pt2x-code-link[data-kernel]``: show the kernel's row (and source) in codegen;
 * - ``a.pt2x-line-link[data-line]``: select the nodes a source line made (``file.py:12``).
 * The stage holding the target is opened first: its ``<details>`` on the page, its tab in the
 * notebook (stages there are built when first shown, graphs mounted when first visible, so the
 * target is waited for).
 */

import type { GraphView } from './view';

interface Registry {
  views: WeakMap<Element, GraphView>;
  docs: WeakSet<Document>;
}

/** One registry per window: the notebook may load this bundle once per widget. */
function registry(): Registry {
  const g = globalThis as unknown as { __pt2xGraphLinks?: Registry };
  g.__pt2xGraphLinks ??= { views: new WeakMap(), docs: new WeakSet() };
  return g.__pt2xGraphLinks;
}

export function register(root: Element, view: GraphView): void {
  registry().views.set(root, view);
  installLinks(root.ownerDocument);
}

const LINKS = 'a.pt2x-node-link, a.pt2x-kernel-link, a.pt2x-code-link, a.pt2x-line-link';
const WAIT_MS = 4000;

export function installLinks(doc: Document): void {
  const reg = registry();
  if (reg.docs.has(doc)) {
    return;
  }
  reg.docs.add(doc);
  doc.addEventListener('click', ev => {
    const a = (ev.target as Element | null)?.closest?.(LINKS) as HTMLElement | null;
    if (a) {
      ev.preventDefault();
      follow(a);
    }
  });
}

/** Where a link's targets are looked for: its compile (page), its notebook output. */
function scopeOf(a: Element): Element {
  return a.closest('.pt2x-compile, .jp-OutputArea-output') ?? a.ownerDocument.body;
}

function follow(a: HTMLElement): void {
  const scope = scopeOf(a);
  const kernel = a.dataset.kernel ?? '';
  if (a.classList.contains('pt2x-code-link')) {
    openStage(scope, 'codegen');
    waitFor(
      () => codeRow(scope, kernel),
      row => {
        row.closest('details')?.setAttribute('open', '');
        row.scrollIntoView({ block: 'center' });
        row.classList.add('pt2x-flash');
        // and its source, further down: the block titled "<role> kernel <name> (<language>)"
        for (const s of Array.from(scope.querySelectorAll('details > summary'))) {
          if (s.textContent?.includes(` kernel ${kernel} (`)) {
            (s.parentElement as HTMLDetailsElement).open = true;
          }
        }
        setTimeout(() => row.classList.remove('pt2x-flash'), 2500);
      }
    );
    return;
  }
  const node = a.dataset.node;
  const line = a.dataset.line;
  const own = a.closest('.pt2x-gv');
  const wanted = (v: GraphView) =>
    line !== undefined
      ? v.hasLine(line, kernel || undefined)
      : node !== undefined
        ? v.hasNode(node, kernel || undefined)
        : v.hasKernel(kernel);
  const ownView = own ? registry().views.get(own) : undefined;
  if (ownView && wanted(ownView)) {
    act(ownView, node, kernel, line);
    return;
  }
  openStage(scope, 'fuse');
  waitFor(
    () => graphIn(scope, wanted),
    v => {
      v.root.scrollIntoView({ block: 'center' });
      act(v, node, kernel, line);
    }
  );
}

function act(v: GraphView, node: string | undefined, kernel: string, line?: string): void {
  if (line !== undefined) {
    v.selectLine(line);
  } else if (node !== undefined) {
    v.selectNamed(node);
  } else {
    v.selectKernel(kernel);
  }
}

function codeRow(scope: Element, kernel: string): HTMLElement | null {
  for (const row of Array.from(scope.querySelectorAll<HTMLElement>('tr[data-kernel]'))) {
    if (row.dataset.kernel === kernel && row.querySelector('a.pt2x-kernel-link')) {
      return row;
    }
  }
  return null;
}

/** A mounted graph of ``scope`` that ``wanted``; graphs not mounted yet are scrolled to, which
 * mounts them (the page mounts a graph when it first shows). */
function graphIn(scope: Element, wanted: (v: GraphView) => boolean): GraphView | null {
  const views = registry().views;
  for (const root of Array.from(scope.querySelectorAll('.pt2x-gv'))) {
    const v = views.get(root);
    if (v && wanted(v)) {
      return v;
    }
  }
  // the first one shown (a graph of a stage still collapsed has no box: scrolling to it
  // would mount nothing, and the one wanted, in the stage just opened, would wait forever)
  const waiting = Array.from(scope.querySelectorAll<HTMLElement>('.pt2x-graph:not([data-mounted])')).find(
    g => g.getClientRects().length > 0
  );
  waiting?.scrollIntoView({ block: 'nearest' });
  return null;
}

/** Open the stage ``name``: the page's ``<details>`` whose summary it is, the notebook's tab. */
function openStage(scope: Element, name: string): void {
  for (const s of Array.from(scope.querySelectorAll('details > summary'))) {
    if (s.textContent?.trim() === name) {
      (s.parentElement as HTMLDetailsElement).open = true;
    }
  }
  for (const tab of Array.from(scope.querySelectorAll<HTMLElement>('.lm-TabBar-tab'))) {
    if (tab.textContent?.trim() === name && !tab.classList.contains('lm-mod-current')) {
      const r = tab.getBoundingClientRect();
      const at = { bubbles: true, button: 0, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 };
      tab.dispatchEvent(new PointerEvent('pointerdown', at));
      tab.dispatchEvent(new PointerEvent('pointerup', at));
    }
  }
}

function waitFor<T>(find: () => T | null, then: (t: T) => void, start = Date.now()): void {
  const t = find();
  if (t !== null) {
    then(t);
  } else if (Date.now() - start < WAIT_MS) {
    setTimeout(() => waitFor(find, then, start), 100);
  }
}
