/**
 * The graph view: a toolbar (search, fit, zoom, collapse), the drawing (laid out by layout.ts,
 * drawn by drawing.ts, zoomed and panned by camera.ts, a minimap and module labels at a
 * distance) and, beside it, the row of what was selected (panel.ts). This class holds what
 * is shown now (expanded modules, the selection, the search's hits) and wires the parts:
 * links.ts calls its select* and has* methods. Every text from the payload goes in through
 * textContent: no user text becomes markup.
 */

import { ZoomTransform, zoomTransform } from 'd3-zoom';

import { register } from './links';
import { GraphModel, Payload, Segment, nodeId, segId, validate } from './model';
import { el, injectStyle, svg } from './dom';
import { Camera } from './camera';
import { drawScene, groups } from './drawing';
import { Layout, Placed, layout } from './layout';
import { LOD_SCALE, Labels } from './lod';
import { Minimap } from './minimap';
import { Panel } from './panel';
import { kernelNodes, lineNodes } from './search';

export const FIRST_VIEW_LEAVES = 40; // what the first view shows at most, expanded greedily
const HIT_LIST = 200; // search results counted, at most

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
  private panel: Panel;
  private status: HTMLSpanElement;
  private hitsLabel: HTMLSpanElement;
  private camera: Camera;
  private lay: Layout | null = null;
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
    this.panel = new Panel(this.model, i => this.jump(i));
    const main = el('div', 'pt2x-gv-main');
    main.append(this.stage, this.panel.el);
    this.root.append(bar, main);
    host.replaceChildren(this.root);
    register(this.root, this);
    this.camera = new Camera(this.svgEl, this.stage, this.root, t => {
      this.viewport.setAttribute('transform', t.toString());
      this.zoomed(t);
    });

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

  /** The first time the box has a size: open on the focus, else fit (on the top where a fit
   * would be too small to read). */
  private resized(): void {
    const r = this.camera.box();
    if (r.width > 0 && r.height > 0 && !this.fitted) {
      this.fitted = true;
      if (!this.focusRegion()) {
        this.fit();
        const first = this.model
          .visible()
          .leaves.map(l => this.placedOf(l.id))
          .find((p): p is Placed => !!p);
        this.camera.openOnTop(first, this.lay?.placed.values() ?? []);
      }
    }
  }

  /** Lay out and draw what is visible now. */
  draw(): void {
    const m = this.model;
    const vis = m.visible();
    const lay = layout(m, vis);
    this.lay = lay;
    const acts = {
      toggle: (seg: Segment) => this.toggle(seg),
      select: (i: number) => this.select(i),
      jump: (i: number) => this.jump(i),
      center: (id: string) => this.center(id)
    };
    const scene = drawScene(m, vis, lay, acts);
    this.labels.set(groups(vis, lay, acts.toggle), lay.size.width, lay.size.height);
    this.mini.set(
      lay.size.width,
      lay.size.height,
      vis.clusters.map(c => lay.g.node(`s${c.seg.id}`)),
      vis.leaves.map(l => lay.g.node(l.id))
    );
    this.viewport.replaceChildren(...scene.layers, this.labels.layer);
    this.root.dataset.saved = String(scene.saved);
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

  /** After a zoom or pan, and after each drawing: the level of detail, the minimap. */
  private zoomed(t: ZoomTransform): void {
    const far = t.k < LOD_SCALE;
    this.root.classList.toggle('pt2x-gv-far', far);
    this.labels.place(t.x, t.y, t.k, far);
    const r = this.camera.box();
    this.mini.show(t.x, t.y, t.k, r.width, r.height);
  }

  /** Centre the point (x, y) of the layout, at the current scale. */
  centerAt(x: number, y: number): void {
    this.camera.centerAt(x, y);
  }

  /** Expand a collapsed module box, or collapse an expanded one, keeping it in view. */
  toggle(seg: Segment): void {
    this.revealed = [];
    if (this.model.expanded.has(seg.id)) {
      this.model.collapse(seg);
    } else {
      this.model.expanded.add(seg.id);
    }
    this.panel.segment(seg);
    this.draw();
    this.center(segId(seg));
  }

  /** Show node ``i``'s row beside the graph and mark it. */
  select(i: number): void {
    this.selected = i;
    this.panel.node(i);
    this.mark(i);
  }

  /** Whether this graph has node ``name`` (fused into ``kernel``, when given). */
  hasNode(name: string, kernel?: string): boolean {
    const i = this.model.p.nodes.findIndex(r => r.n === name);
    return i >= 0 && (kernel === undefined || this.model.kernel(i) === kernel);
  }

  hasLine(where: string, kernel?: string): boolean {
    return lineNodes(this.model, where, kernel).length > 0;
  }

  hasKernel(kernel: string): boolean {
    return this.model.p.kernels?.includes(kernel) ?? false;
  }

  /** Select the nodes source line ``where`` made: the first centred, all marked, the line's
   * row beside (its code, its nodes and the kernels they were fused into). */
  selectLine(where: string): boolean {
    const mine = lineNodes(this.model, where);
    if (!mine.length) {
      return false;
    }
    this.showAll(mine);
    this.panel.line(where, mine);
    this.root.dataset.line = where;
    return true;
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
    const mine = kernelNodes(this.model, kernel);
    if (!mine.length) {
      return false;
    }
    this.showAll(mine);
    this.panel.kernel(kernel, mine);
    this.root.dataset.kernel = kernel;
    return true;
  }

  /** The first of ``mine`` centred, all of them marked as hits. */
  private showAll(mine: number[]): void {
    this.jump(mine[0]);
    this.hits = mine;
    this.hit = 0;
    this.markHits();
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
        this.panel.hint(`no node matches ${query.trim()}`);
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
    this.center(nodeId(i), Math.max(this.camera.scale(), 0.8));
  }

  /** Centre the item ``id`` at scale ``k`` (the current one by default). */
  center(id: string, k = this.camera.scale()): void {
    const p = this.placedOf(id);
    if (!p || !this.camera.box().width) {
      return;
    }
    this.camera.centerAt(p.x, p.y, k);
  }

  /** Open on the payload's focus (the compile's most expensive kernel's nodes): shown,
   * marked, zoomed to fit them (camera.ts), the status saying why; false without one. */
  focusRegion(): boolean {
    const m = this.model;
    const focus = (m.p.focus ?? []).filter(i => i >= 0 && i < m.p.nodes.length);
    if (!focus.length || !this.camera.box().width) {
      return false;
    }
    focus.forEach(i => m.reveal(i));
    this.draw();
    const boxes = focus.map(i => this.placedOf(nodeId(i))).filter((p): p is Placed => !!p);
    if (!boxes.length) {
      return false;
    }
    this.camera.focus(boxes);
    this.hits = focus;
    this.markHits();
    this.root.dataset.focus = m.p.focusWhy ?? '';
    this.status.textContent += ` · opened on ${m.p.focusWhy ?? 'the most expensive kernel'} (fit: the whole graph)`;
    return true;
  }

  /** The whole graph in the box (``width``: as wide as the box, from its top). */
  fit(width = false): void {
    this.camera.fit(this.lay?.size ?? { width: 0, height: 0 }, width);
  }

  zoomBy(f: number): void {
    this.camera.zoomBy(f);
  }

  /** Where the item ``id`` is drawn (layout coordinates: centre and size). */
  placedOf(id: string): Placed | undefined {
    return this.lay?.placed.get(id);
  }
}
