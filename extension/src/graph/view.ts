/**
 * The graph view's DOM: a toolbar (search, fit, zoom, collapse), the drawing (SVG laid out by
 * dagre, zoomed and panned by d3-zoom) and, beside it, the row of the node clicked.
 * Every text from the payload goes in through textContent: no user text becomes markup.
 */

import dagre, { type NodeLabel, type Point } from '@dagrejs/dagre';
import { select } from 'd3-selection';
import { register } from './links';
import { zoom, zoomIdentity, zoomTransform, ZoomBehavior, ZoomTransform } from 'd3-zoom';

import {
  GraphModel,
  Item,
  Payload,
  Segment,
  Visible,
  itemId,
  nodeId,
  segLabel,
  shortTarget,
  validate
} from './model';
import { clip, el, injectStyle, svg } from './dom';
import { Group, LOD_SCALE, Labels } from './lod';
import { Minimap } from './minimap';
import { SavedEnd, portTitle, savedEdges } from './saved';

export const FIRST_VIEW_LEAVES = 40; // what the first view shows at most, expanded greedily
const CHAR_W = 6.6; // px per character of the 11 px monospace labels
const LINE_H = 14;
const TITLE = '~title'; // the id suffix of an expanded module's title node (titleNodes)
const HIT_LIST = 200; // search results counted, at most

interface Placed {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The graph view mounted in ``host``; returns a function that removes it. */
export function mount(host: HTMLElement, payload: unknown): () => void {
  injectStyle(host.ownerDocument);
  const why = validate(payload);
  if (why !== null) {
    host.replaceChildren(el('div', 'pt2x-gv-error', `PT2 Explorer could not show this graph: ${why}`));
    return () => host.replaceChildren();
  }
  const view = new GraphView(host, payload as Payload);
  return () => view.dispose();
}

export class GraphView {
  readonly model: GraphModel;
  readonly root: HTMLDivElement;
  private stage: HTMLDivElement;
  private svgEl: SVGSVGElement;
  private viewport: SVGGElement;
  private info: HTMLDivElement;
  private status: HTMLSpanElement;
  private hitsLabel: HTMLSpanElement;
  private zoomer: ZoomBehavior<SVGSVGElement, unknown>;
  private placed = new Map<string, Placed>();
  private size = { width: 0, height: 0 };
  private hits: number[] = [];
  private hit = -1;
  private revealed: string[] = []; // modules the last search jump expanded
  private selected: number | null = null;
  private fitted = false;
  private observer: ResizeObserver | null = null;
  private labels = new Labels();
  private mini: Minimap;

  constructor(host: HTMLElement, payload: Payload) {
    this.model = new GraphModel(payload);
    this.model.expandInitial(FIRST_VIEW_LEAVES);
    this.root = el('div', 'pt2x-gv');
    const bar = el('div', 'pt2x-gv-bar');
    const search = el('input', 'pt2x-gv-search');
    search.type = 'search';
    search.placeholder = 'find: text, op:addmm, module:ln_1, line:123, name:mm_3';
    search.setAttribute('aria-label', 'find a node');
    this.hitsLabel = el('span', 'pt2x-gv-hits');
    bar.append(search, this.hitsLabel);
    const button = (label: string, title: string, act: () => void) => {
      const b = el('button', 'pt2x-gv-btn', label);
      b.type = 'button';
      b.title = title;
      b.addEventListener('click', act);
      bar.append(b);
      return b;
    };
    button('fit', 'the whole graph in the box', () => this.fit());
    button('fit width', 'the graph as wide as the box', () => this.fit(true));
    button('−', 'zoom out', () => this.zoomBy(1 / 1.4));
    button('+', 'zoom in', () => this.zoomBy(1.4));
    button('collapse all', 'every module one box', () => {
      this.model.expanded.clear();
      this.model.expanded.add('');
      this.draw();
      this.fit();
    });
    button('expand all', 'every module expanded: each node on its own', () => {
      this.model.expandAll();
      this.draw();
      this.fit();
    });
    this.status = el('span', 'pt2x-gv-status');
    bar.append(this.status);
    this.stage = el('div', 'pt2x-gv-stage');
    this.svgEl = svg('svg', { class: 'pt2x-gv-svg', width: '100%', height: '100%' });
    this.viewport = svg('g', { class: 'pt2x-gv-viewport' });
    this.svgEl.append(this.viewport);
    this.mini = new Minimap((x, y) => this.centerAt(x, y));
    this.stage.append(this.svgEl, this.mini.el);
    this.info = el('div', 'pt2x-gv-info');
    this.info.append(el('div', 'pt2x-gv-note', 'Click a node to see its row, a module box to expand it.'));
    const main = el('div', 'pt2x-gv-main');
    main.append(this.stage, this.info);
    this.root.append(bar, main);
    host.replaceChildren(this.root);
    register(this.root, this);

    this.zoomer = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.02, 4])
      .on('zoom', e => {
        this.viewport.setAttribute('transform', e.transform.toString());
        this.root.dataset.scale = e.transform.k.toFixed(4);
        this.zoomed(e.transform);
      });
    select(this.svgEl).call(this.zoomer).on('dblclick.zoom', null);

    // typing shows the first match; the Enter that ends the typing stays on it (the hit shown),
    // each Enter after it goes to the next
    let typed = false;
    search.addEventListener('input', () => {
      typed = true;
      this.find(search.value, false);
    });
    search.addEventListener('keydown', e => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.find(search.value, !typed);
        typed = false;
      }
    });
    this.draw();
    // fit once the box has a size (a hidden tab has none yet)
    this.observer = new ResizeObserver(() => this.resized());
    this.observer.observe(this.stage);
    this.resized();
  }

  dispose(): void {
    this.observer?.disconnect();
    this.root.remove();
  }

  private resized(): void {
    const r = this.stage.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && !this.fitted) {
      this.fitted = true;
      if (!this.focusRegion()) {
        this.openOnTop();
      }
    }
  }

  /** Without a focus: the whole graph where it is readable so (LOD_SCALE and above), else
   * its start (the first item drawn, at the top) at LOD_SCALE, labels on. */
  private openOnTop(): void {
    this.fit();
    const r = this.stage.getBoundingClientRect();
    const first = this.model
      .visible()
      .leaves.map(l => this.placed.get(l.id))
      .find((p): p is Placed => !!p);
    if (this.scale() >= LOD_SCALE || !first || !r.width) {
      return;
    }
    const k = LOD_SCALE;
    const top = Math.min(...[...this.placed.values()].map(p => p.y - p.height / 2));
    const t = zoomIdentity
      .translate(r.width / 2 - first.x * k, 20 - Math.max(top, first.y - first.height / 2 - 40) * k)
      .scale(k);
    select(this.svgEl).call(this.zoomer.transform, t);
  }

  /** A node of its own for each expanded module's title, inside it and above everything else
   * in it (an edge to each of its own nodes that nothing inside it feeds, and to its
   * sub-modules' titles): dagre keeps no room for a cluster's label, so without it a title would lie
   * under its first nodes or a nested module's title. */
  private titleNodes(g: InstanceType<typeof dagre.graphlib.Graph>, vis: Visible): void {
    const inside = new Map<string, string[]>(); // cluster -> the clusters around it, innermost first
    const parentOf = new Map<string, string | null>(vis.clusters.map(c => [`s${c.seg.id}`, c.parent]));
    const chain = (c: string | null): string[] => {
      const out: string[] = [];
      for (let x = c; x; x = parentOf.get(x) ?? null) {
        out.push(x);
      }
      return out;
    };
    for (const leaf of vis.leaves) {
      inside.set(leaf.id, chain(leaf.parent));
    }
    const fed = new Map<string, Set<string>>(); // leaf -> the clusters holding a leaf that feeds it
    for (const e of vis.edges) {
      const from = new Set(inside.get(e.from) ?? []);
      for (const c of inside.get(e.to) ?? []) {
        if (from.has(c)) {
          (fed.get(e.to) ?? fed.set(e.to, new Set()).get(e.to)!).add(c);
        }
      }
    }
    for (const c of vis.clusters) {
      const id = `s${c.seg.id}`;
      const label = `▾ ${clip(segLabel(c.seg))}`;
      g.setNode(`${id}${TITLE}`, { width: label.length * CHAR_W + 8, height: LINE_H });
      g.setParent(`${id}${TITLE}`, id);
      if (c.parent) {
        g.setEdge(`${c.parent}${TITLE}`, `${id}${TITLE}`, { weight: 1 });
      }
    }
    for (const leaf of vis.leaves) {
      if (leaf.parent && !fed.get(leaf.id)?.has(leaf.parent)) {
        g.setEdge(`${leaf.parent}${TITLE}`, leaf.id, { weight: 1 });
      }
    }
  }

  /** Lay out and draw what is visible now. */
  draw(): void {
    const m = this.model;
    const vis = m.visible();
    const g = new dagre.graphlib.Graph({ compound: true, multigraph: false });
    g.setGraph({ rankdir: 'TB', nodesep: 14, ranksep: 26, marginx: 8, marginy: 8 });
    g.setDefaultEdgeLabel(() => ({}));
    const labels = new Map<string, string[]>();
    for (const c of vis.clusters) {
      const id = `s${c.seg.id}`;
      g.setNode(id, { label: segLabel(c.seg), paddingTop: 22 } as unknown as NodeLabel);
      if (c.parent) {
        g.setParent(id, c.parent);
      }
    }
    for (const leaf of vis.leaves) {
      const lines = this.labelOf(leaf.item);
      labels.set(leaf.id, lines);
      const width = Math.max(...lines.map(l => l.length)) * CHAR_W + 16;
      g.setNode(leaf.id, { width, height: lines.length * LINE_H + 8 });
      if (leaf.parent) {
        g.setParent(leaf.id, leaf.parent);
      }
    }
    for (const e of vis.edges) {
      g.setEdge(e.from, e.to, { weight: e.count });
    }
    this.titleNodes(g, vis);
    const saved = savedEdges(m, vis);
    dagre.layout(g);
    const gl = g.graph();
    this.size = { width: gl.width ?? 0, height: gl.height ?? 0 };
    this.placed.clear();

    const clusters = svg('g', { class: 'pt2x-gv-clusters' });
    for (const c of vis.clusters) {
      const id = `s${c.seg.id}`;
      const n = g.node(id);
      const box = svg('g', {
        class: 'pt2x-gv-cluster',
        'data-id': id,
        'data-path': c.seg.path,
        'data-label': segLabel(c.seg)
      });
      box.append(
        svg('rect', { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height, rx: 6 })
      );
      const head = g.node(`${id}${TITLE}`); // its title's own place (titleNodes)
      const t = svg(
        'text',
        head
          ? { x: head.x - head.width / 2, y: head.y + 4 }
          : { x: n.x - n.width / 2 + 6, y: n.y - n.height / 2 + 13 }
      );
      t.textContent = `▾ ${clip(segLabel(c.seg))}`;
      const title = svg('title');
      title.textContent = `${segLabel(c.seg)}: ${c.seg.end - c.seg.start} nodes, expanded (click to collapse)`;
      t.append(title);
      t.addEventListener('click', ev => {
        ev.stopPropagation();
        this.toggle(c.seg);
      });
      box.append(t);
      clusters.append(box);
      this.placed.set(id, n);
    }
    const edges = svg('g', { class: 'pt2x-gv-edges' });
    for (const e of vis.edges) {
      const pts: Point[] = g.edge(e.from, e.to).points ?? [];
      if (pts.length < 2 || saved.edges.has(`${e.from}>${e.to}`)) {
        continue;
      }
      const d = `M${pts.map(p => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('L')}`;
      const path = svg('path', {
        d,
        'marker-end': 'url(#pt2x-gv-arrow)',
        'data-from': e.from,
        'data-to': e.to
      });
      if (e.count > 1) {
        path.setAttribute('stroke-width', String(Math.min(1 + Math.log2(e.count), 4)));
      }
      edges.append(path);
    }
    const nodes = svg('g', { class: 'pt2x-gv-nodes' });
    vis.leaves.forEach(leaf => {
      const n = g.node(leaf.id);
      this.placed.set(leaf.id, n);
      nodes.append(this.drawLeaf(leaf.id, leaf.item, n, labels.get(leaf.id) ?? []));
    });
    const defs = svg('defs');
    const marker = svg('marker', {
      id: 'pt2x-gv-arrow',
      viewBox: '0 0 10 10',
      refX: 10,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse'
    });
    marker.append(svg('path', { d: 'M0,0L10,5L0,10z', class: 'pt2x-gv-arrowhead' }));
    defs.append(marker);
    const ports = svg('g', { class: 'pt2x-gv-ports' });
    saved.sources.forEach(end => ports.append(this.drawPort(end, true)));
    saved.targets.forEach(end => ports.append(this.drawPort(end, false)));
    const groups: Group[] = [
      ...vis.clusters.map(c => ({
        ...g.node(`s${c.seg.id}`),
        label: segLabel(c.seg),
        cluster: true,
        seg: c.seg
      })),
      ...vis.leaves.flatMap(l =>
        l.item.kind === 'seg'
          ? [{ ...g.node(l.id), label: segLabel(l.item.seg), cluster: false, seg: l.item.seg }]
          : []
      )
    ].map(x => ({ ...x, label: clip(x.label), act: () => this.toggle(x.seg) }));
    this.labels.set(groups, this.size.width, this.size.height);
    this.mini.set(
      this.size.width,
      this.size.height,
      vis.clusters.map(c => g.node(`s${c.seg.id}`)),
      vis.leaves.map(l => g.node(l.id))
    );
    this.viewport.replaceChildren(defs, clusters, edges, nodes, ports, this.labels.layer);
    this.root.dataset.saved = String(saved.sources.length);
    this.zoomed(zoomTransform(this.svgEl));
    const boxes = vis.leaves.filter(l => l.item.kind === 'seg').length;
    this.status.textContent =
      `${m.p.nodes.length} nodes` +
      (boxes ? `, ${boxes} module boxes and ${vis.leaves.length - boxes} single nodes shown` : '');
    this.root.dataset.leaves = String(vis.leaves.length);
    if (this.selected !== null) {
      this.mark(this.selected);
    }
  }

  private labelOf(it: Item): string[] {
    const m = this.model;
    if (it.kind === 'seg') {
      const s = it.seg;
      return [clip(segLabel(s)), `${s.end - s.start} nodes ▸`];
    }
    const r = m.p.nodes[it.node];
    if (r.o === 'output') {
      return ['output'];
    }
    const lines = [clip(r.n)];
    if (r.o !== 'placeholder' && r.o !== 'get_attr') {
      lines.push(clip(shortTarget(r.t)));
    }
    if (r.d) {
      lines.push(clip(r.d));
    }
    return lines;
  }

  private drawLeaf(id: string, it: Item, n: Placed, lines: string[]): SVGGElement {
    const m = this.model;
    const cls = it.kind === 'seg' ? 'pt2x-gv-box' : `pt2x-gv-node pt2x-gv-op-${m.p.nodes[it.node].o}`;
    const g = svg('g', { class: cls, 'data-id': id });
    const x = n.x - n.width / 2;
    const y = n.y - n.height / 2;
    const rect = svg('rect', { x, y, width: n.width, height: n.height, rx: it.kind === 'seg' ? 4 : 2 });
    const title = svg('title');
    if (it.kind === 'seg') {
      g.setAttribute('data-path', it.seg.path);
      g.setAttribute('data-label', segLabel(it.seg));
      g.setAttribute('data-order', String(it.seg.start));
      title.textContent = `${segLabel(it.seg)}\n${it.seg.end - it.seg.start} nodes, collapsed (click to expand)\n${m.census(it.seg)}`;
    } else {
      const r = m.p.nodes[it.node];
      g.setAttribute('data-name', r.n);
      g.setAttribute('data-order', String(m.pos[it.node]));
      if (r.c) {
        rect.style.fill = r.c;
      }
      const src = m.source(it.node);
      title.textContent = [r.n, `op: ${r.o}`, `target: ${r.t}`, r.d ?? '', src ? `source: ${src[0]}` : '']
        .filter(Boolean)
        .join('\n');
    }
    g.append(title, rect);
    lines.forEach((line, k) => {
      const t = svg('text', { x: n.x, y: y + 4 + LINE_H * (k + 1) - 3, 'text-anchor': 'middle' });
      t.textContent = line;
      g.append(t);
    });
    g.addEventListener('click', () => {
      if (it.kind === 'seg') {
        this.toggle(it.seg);
      } else {
        this.select(it.node);
      }
    });
    return g;
  }

  /** A saved-tensor port: below a forward box (``source``) or above a backward one. */
  private drawPort(end: SavedEnd, source: boolean): SVGGElement {
    const n = this.placed.get(end.leaf) as Placed;
    const tensors = new Set(end.pairs.map(([f, b]) => (source ? f : b))).size;
    const g = svg('g', {
      class: `pt2x-gv-port pt2x-gv-port-${source ? 'saved' : 'reads'}`,
      'data-leaf': end.leaf,
      'data-tensors': tensors,
      'data-to': end.others.join(' ')
    });
    const y = source ? n.y + n.height / 2 : n.y - n.height / 2 - 8;
    g.append(svg('rect', { x: n.x - 9, y, width: 18, height: 8, rx: 3 }));
    const t = svg('text', { x: n.x, y: y + 7, 'text-anchor': 'middle' });
    t.textContent = source ? '⤓' : '⤒';
    const title = svg('title');
    title.textContent = portTitle(this.model, end, source);
    g.append(t, title);
    g.addEventListener('click', ev => {
      ev.stopPropagation();
      const other = end.others[0];
      const node = /^n(\d+)$/.exec(other);
      if (node) {
        this.jump(Number(node[1]));
      } else {
        this.center(other);
      }
    });
    return g;
  }

  /** After a zoom or pan, and after each drawing: the level of detail, the minimap. */
  private zoomed(t: ZoomTransform): void {
    const far = t.k < LOD_SCALE;
    this.root.classList.toggle('pt2x-gv-far', far);
    this.labels.place(t.x, t.y, t.k, far);
    const r = this.stage.getBoundingClientRect();
    this.mini.show(t.x, t.y, t.k, r.width, r.height);
  }

  /** Centre the point (x, y) of the layout, at the current scale. */
  centerAt(x: number, y: number): void {
    const k = this.scale();
    const r = this.stage.getBoundingClientRect();
    const t = zoomIdentity.translate(r.width / 2 - x * k, r.height / 2 - y * k).scale(k);
    select(this.svgEl).call(this.zoomer.transform, t);
  }

  /** Expand a collapsed module box, or collapse an expanded one, keeping it in view. */
  toggle(seg: Segment): void {
    const id = `s${seg.id}`;
    this.revealed = [];
    if (this.model.expanded.has(seg.id)) {
      this.model.collapse(seg);
    } else {
      this.model.expanded.add(seg.id);
    }
    this.showSegment(seg);
    this.draw();
    this.center(id);
  }

  private showSegment(seg: Segment): void {
    const rows: [string, string][] = [
      ['module', segLabel(seg)],
      ['nodes', String(seg.end - seg.start)],
      ['ops', this.model.census(seg, 12)]
    ];
    this.showRows(rows);
  }

  /** Show node ``i``'s row beside the graph and mark it: its kernel links to its row in
   * codegen; the nodes and kernels its source line made link to themselves (links.ts). */
  select(i: number): void {
    const m = this.model;
    const r = m.p.nodes[i];
    this.selected = i;
    const src = m.source(i);
    const mod = m.module(i);
    const args = (r.a ?? []).map(a => m.p.nodes[a].n);
    const kernel = m.kernel(i);
    const rows: [string, string | Node][] = [
      ['name', r.n],
      ['op', r.o],
      ['target', r.t],
      ['dtype/shape', r.d ?? ''],
      ['source', src ? src[0] : ''],
      ['code', src ? src[1] : ''],
      ['module', mod ? mod + (r.i ? ' (inferred)' : '') : ''],
      [
        'kernel',
        !kernel
          ? ''
          : /^(extern_kernels|torch\.ops)\./.test(kernel)
            ? link('pt2x-code-link', `runs as ${kernel}`, { kernel }, 'a library kernel: its row in codegen')
            : link('pt2x-code-link', kernel, { kernel }, 'its row and source in codegen')
      ],
      ['from this line', r.s !== undefined ? this.lineLinks(r.s) : ''],
      ['inputs', args.slice(0, 30).join(', ') + (args.length > 30 ? ' …' : '')]
    ];
    this.showRows([...rows, ...this.gradRows(i)]);
    this.mark(i);
  }

  /** A joint graph node's side, seq_nr and links: from a backward node to the forward node
   * it differentiates, from a forward node to its backward nodes (torch's seq_nr). */
  private gradRows(i: number): [string, string | HTMLElement][] {
    const m = this.model;
    const r = m.p.nodes[i];
    const link = (j: number) => {
      const b = el('button', 'pt2x-gv-link', m.p.nodes[j].n);
      b.type = 'button';
      b.dataset.node = m.p.nodes[j].n;
      b.addEventListener('click', () => this.jump(j));
      return b;
    };
    const links = (js: number[]) => {
      const span = el('span');
      js.slice(0, 30).forEach((j, k) => span.append(...(k ? [', '] : []), link(j)));
      return span;
    };
    const grads = m.gradients(i);
    return [
      ['seq_nr', r.q === undefined ? '' : String(r.q)],
      ['side', r.b ? 'backward' : r.q !== undefined || grads.length ? 'forward' : ''],
      ['gradient of', r.f === undefined ? '' : link(r.f)],
      ['backward nodes', grads.length ? links(grads) : '']
    ];
  }

  /** The nodes of source line ``s`` and the kernels they were fused into, as links. */
  private lineLinks(s: number): Node {
    const m = this.model;
    const same = m.p.nodes
      .map((_, j) => j)
      .filter(j => m.p.nodes[j].s === s && m.p.nodes[j].o !== 'placeholder');
    const kernels = [...new Set(same.map(j => m.kernel(j)).filter((k): k is string => k !== null))];
    const span = el('span', 'pt2x-gv-line');
    span.append(`${same.length} node${same.length === 1 ? '' : 's'}: `);
    same.slice(0, 30).forEach((j, n) => {
      span.append(
        n ? ', ' : '',
        link('pt2x-node-link', m.p.nodes[j].n, { node: m.p.nodes[j].n }, 'select it')
      );
    });
    if (same.length > 30) {
      span.append(' …');
    }
    if (kernels.length) {
      span.append(`; ${kernels.length} kernel${kernels.length === 1 ? '' : 's'}: `);
      kernels.forEach((k, n) =>
        span.append(n ? ', ' : '', link('pt2x-kernel-link', k, { kernel: k }, 'its nodes'))
      );
    }
    return span;
  }

  /** Whether this graph has node ``name`` (fused into ``kernel``, when given). */
  hasNode(name: string, kernel?: string): boolean {
    const i = this.model.p.nodes.findIndex(r => r.n === name);
    return i >= 0 && (kernel === undefined || this.model.kernel(i) === kernel);
  }

  /** The nodes source line ``where`` made (``file.py:12``; fused into ``kernel``, when given). */
  private ofLine(where: string, kernel?: string): number[] {
    const m = this.model;
    return m.p.nodes
      .map((_, j) => j)
      .filter(
        j =>
          m.p.nodes[j].o !== 'placeholder' &&
          m.source(j)?.[0] === where &&
          (kernel === undefined || m.kernel(j) === kernel)
      );
  }

  hasLine(where: string, kernel?: string): boolean {
    return this.ofLine(where, kernel).length > 0;
  }

  /** Select the nodes source line ``where`` made: the first centred, all marked, the line's
   * row beside (its code, its nodes and the kernels they were fused into). */
  selectLine(where: string): boolean {
    const mine = this.ofLine(where);
    if (!mine.length) {
      return false;
    }
    const src = this.model.source(mine[0]);
    this.jump(mine[0]);
    this.hits = mine;
    this.hit = 0;
    this.markHits();
    this.showRows([
      ['source', where],
      ['code', src ? src[1] : ''],
      ['made', this.lineLinks(this.model.p.nodes[mine[0]].s ?? -1)]
    ]);
    this.root.dataset.line = where;
    return true;
  }

  hasKernel(kernel: string): boolean {
    return this.model.p.kernels?.includes(kernel) ?? false;
  }

  /** Select node ``name``: shown (its modules expanded), centred, its row beside. */
  selectNamed(name: string): boolean {
    const i = this.model.p.nodes.findIndex(r => r.n === name);
    if (i >= 0) {
      this.jump(i);
    }
    return i >= 0;
  }

  /** Select the nodes fused into ``kernel``: the first centred, all marked, the kernel's row
   * beside (its nodes, its source lines, a link to its code). */
  selectKernel(kernel: string): boolean {
    const m = this.model;
    const mine = m.p.nodes.map((_, j) => j).filter(j => m.kernel(j) === kernel);
    if (!mine.length) {
      return false;
    }
    this.jump(mine[0]);
    this.hits = mine;
    this.hit = 0;
    this.markHits();
    const nodes = el('span');
    mine.forEach((j, n) =>
      nodes.append(
        n ? ', ' : '',
        link('pt2x-node-link', m.p.nodes[j].n, { node: m.p.nodes[j].n }, 'select it')
      )
    );
    const lines = [...new Set(mine.map(j => m.source(j)?.[0]).filter((x): x is string => !!x))];
    this.showRows([
      ['kernel', link('pt2x-code-link', kernel, { kernel }, 'its row and source in codegen')],
      ['nodes', nodes],
      ['count', String(mine.length)],
      ['source lines', lines.join(', ')]
    ]);
    this.root.dataset.kernel = kernel;
    return true;
  }

  private showRows(rows: [string, string | Node][]): void {
    const table = el('table', 'pt2x-gv-row');
    for (const [k, v] of rows) {
      if (!v) {
        continue;
      }
      const tr = el('tr');
      const td = el('td');
      td.append(v);
      tr.append(el('th', undefined, k), td);
      table.append(tr);
    }
    this.info.replaceChildren(table);
  }

  private mark(i: number): void {
    for (const e of Array.from(this.viewport.querySelectorAll('.pt2x-gv-selected'))) {
      e.classList.remove('pt2x-gv-selected');
    }
    const e = this.viewport.querySelector(`[data-id="${nodeId(i)}"]`);
    e?.classList.add('pt2x-gv-selected');
  }

  /** Search: the matches counted; ``next`` (Enter) or a new query jumps to a match. */
  find(query: string, next: boolean): void {
    const hits = this.model.search(query).slice(0, HIT_LIST);
    const same = hits.length === this.hits.length && hits.every((h, k) => h === this.hits[k]);
    this.hits = hits;
    if (!hits.length) {
      this.hit = -1;
      this.hitsLabel.textContent = query.trim() ? 'no match' : '';
      if (query.trim()) {
        // the panel follows the search: no match, no node shown as if it were one
        this.selected = null;
        this.mark(-1);
        this.info.replaceChildren(el('div', 'pt2x-gv-hint', `no node matches ${query.trim()}`));
      }
      this.markHits();
      return;
    }
    this.hit = same && next ? (this.hit + 1) % hits.length : same ? this.hit : 0;
    const more = hits.length === HIT_LIST ? '+' : '';
    this.hitsLabel.textContent = `${this.hit + 1} of ${hits.length}${more}`;
    this.jump(hits[this.hit]);
    this.markHits();
  }

  /** Every match drawn as a node marked; the current one is the selected node. */
  private markHits(): void {
    for (const e of Array.from(this.viewport.querySelectorAll('.pt2x-gv-hit'))) {
      e.classList.remove('pt2x-gv-hit');
    }
    for (const i of this.hits) {
      this.viewport.querySelector(`[data-id="${nodeId(i)}"]`)?.classList.add('pt2x-gv-hit');
    }
  }

  /** Expand what hides node ``i`` (folding again what the previous jump opened), draw,
   * centre it and show its row. */
  jump(i: number): void {
    const m = this.model;
    const before = [...m.expanded].sort().join('|');
    this.revealed.forEach(id => m.expanded.delete(id));
    this.revealed = m
      .ancestors(i)
      .map(s => s.id)
      .filter(id => !m.expanded.has(id));
    this.revealed.forEach(id => m.expanded.add(id));
    this.selected = i;
    if ([...m.expanded].sort().join('|') !== before) {
      this.draw();
    }
    this.select(i);
    this.center(nodeId(i), Math.max(this.scale(), 0.8));
  }

  private scale(): number {
    return Number(this.root.dataset.scale ?? '1');
  }

  /** Centre the item ``id`` at scale ``k`` (the current one by default). */
  center(id: string, k = this.scale()): void {
    const p = this.placed.get(id);
    const r = this.stage.getBoundingClientRect();
    if (!p || !r.width) {
      return;
    }
    const t = zoomIdentity.translate(r.width / 2 - p.x * k, r.height / 2 - p.y * k).scale(k);
    select(this.svgEl).call(this.zoomer.transform, t);
  }

  /** Open on the payload's focus (the compile's most expensive kernel's nodes): shown,
   * marked, zoomed to fit them (at most 1.5) where their labels stay readable (LOD_SCALE),
   * else on the densest stretch of them at LOD_SCALE; the status saying why; false without one. */
  focusRegion(): boolean {
    const m = this.model;
    const focus = (m.p.focus ?? []).filter(i => i >= 0 && i < m.p.nodes.length);
    const r = this.stage.getBoundingClientRect();
    if (!focus.length || !r.width) {
      return false;
    }
    focus.forEach(i => m.reveal(i));
    this.draw();
    const boxes = focus.map(i => this.placed.get(nodeId(i))).filter((p): p is Placed => !!p);
    if (!boxes.length) {
      return false;
    }
    // all of them where that is readable; else, at LOD_SCALE, the densest stretch of them
    // that fits the box (the most of its nodes within one box's height)
    const bounds = (ps: Placed[]) => [
      Math.min(...ps.map(p => p.x - p.width / 2)),
      Math.max(...ps.map(p => p.x + p.width / 2)),
      Math.min(...ps.map(p => p.y - p.height / 2)),
      Math.max(...ps.map(p => p.y + p.height / 2))
    ];
    let [x0, x1, y0, y1] = bounds(boxes);
    let k = Math.min((r.width - 40) / (x1 - x0), (r.height - 40) / (y1 - y0), 1.5);
    if (k < LOD_SCALE) {
      k = LOD_SCALE;
      const high = (r.height - 40) / k;
      const byY = [...boxes].sort((a, b) => a.y - b.y);
      let best = [0, 1];
      for (let i = 0, j = 0; i < byY.length; i++) {
        while (j < byY.length && byY[j].y - byY[i].y <= high) {
          j++;
        }
        if (j - i > best[1] - best[0]) {
          best = [i, j];
        }
      }
      const dense = byY.slice(best[0], best[1]);
      [x0, x1, y0, y1] = bounds(dense);
      if ((x1 - x0) * k > r.width - 40) {
        // wider than the box: centred on its middle node, across, not on empty space
        const xs = dense.map(p => p.x).sort((a, b) => a - b);
        const mid = xs[Math.floor(xs.length / 2)];
        [x0, x1] = [mid, mid];
      }
    }
    const t = zoomIdentity
      .translate(r.width / 2 - ((x0 + x1) / 2) * k, r.height / 2 - ((y0 + y1) / 2) * k)
      .scale(k);
    select(this.svgEl).call(this.zoomer.transform, t);
    this.hits = focus;
    this.markHits();
    this.root.dataset.focus = m.p.focusWhy ?? '';
    this.status.textContent += ` · opened on ${m.p.focusWhy ?? 'the most expensive kernel'} (fit: the whole graph)`;
    return true;
  }

  /** The whole graph in the box (``width``: as wide as the box, from its top). */
  fit(width = false): void {
    const r = this.stage.getBoundingClientRect();
    if (!r.width || !r.height || !this.size.width) {
      return;
    }
    const sx = (r.width - 8) / this.size.width;
    const sy = (r.height - 8) / this.size.height;
    const k = Math.min(width ? sx : Math.min(sx, sy), 2);
    const x = (r.width - this.size.width * k) / 2;
    const y = width ? 4 : (r.height - this.size.height * k) / 2;
    select(this.svgEl).call(this.zoomer.transform, zoomIdentity.translate(x, y).scale(k));
  }

  zoomBy(f: number): void {
    select(this.svgEl).call(this.zoomer.scaleBy, f);
  }

  /** Where the item ``id`` is drawn (layout coordinates: centre and size). */
  placedOf(id: string): Placed | undefined {
    return this.placed.get(id);
  }
}

/** A link the document's listener follows (links.ts). */
function link(cls: string, text: string, data: Record<string, string>, title: string): HTMLAnchorElement {
  const a = el('a', cls, text);
  for (const [k, v] of Object.entries(data)) {
    a.dataset[k] = v;
  }
  a.title = title;
  return a;
}

export { itemId };
