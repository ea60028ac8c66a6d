/**
 * The graph view's drawing: a layout (layout.ts) as SVG: the expanded modules' boxes with
 * their titles, the edges with their arrows, a box per node or collapsed module, the
 * saved-tensor ports (saved.ts). Clicks call back into the view (Acts). Every text from the
 * payload goes in through textContent: no user text becomes markup.
 */

import type { Point } from '@dagrejs/dagre';

import { GraphModel, Item, Segment, Visible, segLabel } from './model';
import { clip, svg } from './dom';
import { LINE_H, Layout, Placed, titleOf } from './layout';
import { Group } from './lod';
import { SavedEnd, portTitle, savedEdges } from './saved';

/** What a click on the drawing does. */
export interface Acts {
  toggle(seg: Segment): void; // a module box or title: expand or collapse it
  select(i: number): void; // a node: its row
  jump(i: number): void; // a port's other end, a node
  center(id: string): void; // a port's other end, a module box
}

/** The drawing's layers, bottom first, and the number of saved-tensor ports below forward boxes. */
export function drawScene(
  m: GraphModel,
  vis: Visible,
  lay: Layout,
  acts: Acts
): { layers: SVGElement[]; saved: number } {
  const saved = savedEdges(m, vis);
  const clusters = svg('g', { class: 'pt2x-gv-clusters' });
  for (const c of vis.clusters) {
    clusters.append(drawCluster(c.seg, lay, acts));
  }
  const edges = svg('g', { class: 'pt2x-gv-edges' });
  for (const e of vis.edges) {
    const pts: Point[] = lay.g.edge(e.from, e.to).points ?? [];
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
  for (const leaf of vis.leaves) {
    const n = lay.placed.get(leaf.id) as Placed;
    nodes.append(drawLeaf(m, leaf.id, leaf.item, n, lay.lines.get(leaf.id) ?? [], acts));
  }
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
  saved.sources.forEach(end => ports.append(drawPort(m, lay, end, true, acts)));
  saved.targets.forEach(end => ports.append(drawPort(m, lay, end, false, acts)));
  return { layers: [defs, clusters, edges, nodes, ports], saved: saved.sources.length };
}

/** The module labels of the level of detail (lod.ts): each expanded module and module box. */
export function groups(vis: Visible, lay: Layout, toggle: (seg: Segment) => void): Group[] {
  return [
    ...vis.clusters.map(c => ({
      ...lay.g.node(`s${c.seg.id}`),
      label: segLabel(c.seg),
      cluster: true,
      seg: c.seg
    })),
    ...vis.leaves.flatMap(l =>
      l.item.kind === 'seg'
        ? [{ ...lay.g.node(l.id), label: segLabel(l.item.seg), cluster: false, seg: l.item.seg }]
        : []
    )
  ].map(x => ({ ...x, label: clip(x.label), act: () => toggle(x.seg) }));
}

/** An expanded module: its box and its title (at its title node's place), which collapses it. */
function drawCluster(seg: Segment, lay: Layout, acts: Acts): SVGGElement {
  const id = `s${seg.id}`;
  const n = lay.placed.get(id) as Placed;
  const box = svg('g', {
    class: 'pt2x-gv-cluster',
    'data-id': id,
    'data-path': seg.path,
    'data-label': segLabel(seg)
  });
  box.append(
    svg('rect', { x: n.x - n.width / 2, y: n.y - n.height / 2, width: n.width, height: n.height, rx: 6 })
  );
  const head = titleOf(lay, id);
  const t = svg(
    'text',
    head
      ? { x: head.x - head.width / 2, y: head.y + 4 }
      : { x: n.x - n.width / 2 + 6, y: n.y - n.height / 2 + 13 }
  );
  t.textContent = `▾ ${clip(segLabel(seg))}`;
  const title = svg('title');
  title.textContent = `${segLabel(seg)}: ${seg.end - seg.start} nodes, expanded (click to collapse)`;
  t.append(title);
  t.addEventListener('click', ev => {
    ev.stopPropagation();
    acts.toggle(seg);
  });
  box.append(t);
  return box;
}

/** A node or a collapsed module box, its label's lines, its tooltip. */
function drawLeaf(m: GraphModel, id: string, it: Item, n: Placed, lines: string[], acts: Acts): SVGGElement {
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
    title.textContent = `${segLabel(it.seg)}\n${it.seg.end - it.seg.start} nodes, collapsed (click to expand)\n${m.opCounts(it.seg)}`;
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
      acts.toggle(it.seg);
    } else {
      acts.select(it.node);
    }
  });
  return g;
}

/** A saved-tensor port: below a forward box (``source``) or above a backward one. */
function drawPort(m: GraphModel, lay: Layout, end: SavedEnd, source: boolean, acts: Acts): SVGGElement {
  const n = lay.placed.get(end.leaf) as Placed;
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
  title.textContent = portTitle(m, end, source);
  g.append(t, title);
  g.addEventListener('click', ev => {
    ev.stopPropagation();
    const other = end.others[0];
    const node = /^n(\d+)$/.exec(other);
    if (node) {
      acts.jump(Number(node[1]));
    } else {
      acts.center(other);
    }
  });
  return g;
}
