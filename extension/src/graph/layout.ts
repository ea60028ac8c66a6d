/**
 * The graph view's layout: what is visible now placed by dagre (top to bottom), each leaf
 * sized by its label's lines, each expanded module a cluster with a title node of its own.
 * No DOM: positions only, which drawing.ts draws.
 */

import dagre, { type NodeLabel, type graphlib } from '@dagrejs/dagre';

import { GraphModel, Item, Visible, segLabel, shortTarget } from './model';
import { clip } from './dom';

const CHAR_W = 6.6; // px per character of the 11 px monospace labels
export const LINE_H = 14;
const TITLE = '~title'; // the id suffix of an expanded module's title node (titleNodes)

/** Where an item is drawn (layout coordinates: centre and size). */
export interface Placed {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type DagreGraph = graphlib.Graph;

/** What is visible now, placed. */
export interface Layout {
  g: DagreGraph; // the laid-out graph: its nodes' places, its edges' points
  lines: Map<string, string[]>; // leaf id -> its label's lines
  size: { width: number; height: number };
  placed: Map<string, Placed>; // leaf or cluster id -> its place
}

/** The cluster ``id``'s title node's place (titleNodes), if it has one. */
export function titleOf(lay: Layout, id: string): Placed | undefined {
  return lay.g.node(`${id}${TITLE}`);
}

/** Lay out what ``vis`` shows of ``m``. */
export function layout(m: GraphModel, vis: Visible): Layout {
  const g = new dagre.graphlib.Graph({ compound: true, multigraph: false });
  g.setGraph({ rankdir: 'TB', nodesep: 14, ranksep: 26, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  const lines = new Map<string, string[]>();
  for (const c of vis.clusters) {
    const id = `s${c.seg.id}`;
    g.setNode(id, { label: segLabel(c.seg), paddingTop: 22 } as unknown as NodeLabel);
    if (c.parent) {
      g.setParent(id, c.parent);
    }
  }
  for (const leaf of vis.leaves) {
    const text = labelOf(m, leaf.item);
    lines.set(leaf.id, text);
    const width = Math.max(...text.map(l => l.length)) * CHAR_W + 16;
    g.setNode(leaf.id, { width, height: text.length * LINE_H + 8 });
    if (leaf.parent) {
      g.setParent(leaf.id, leaf.parent);
    }
  }
  for (const e of vis.edges) {
    g.setEdge(e.from, e.to, { weight: e.count });
  }
  titleNodes(g, vis);
  dagre.layout(g);
  const gl = g.graph();
  const placed = new Map<string, Placed>();
  for (const c of vis.clusters) {
    placed.set(`s${c.seg.id}`, g.node(`s${c.seg.id}`));
  }
  for (const leaf of vis.leaves) {
    placed.set(leaf.id, g.node(leaf.id));
  }
  return { g, lines, size: { width: gl.width ?? 0, height: gl.height ?? 0 }, placed };
}

/** A leaf's label: a module box's name and size, a node's name, target and dtype/shape. */
function labelOf(m: GraphModel, it: Item): string[] {
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

/** A node of its own for each expanded module's title, inside it and above everything else
 * in it (an edge to each of its own nodes that nothing inside it feeds, and to its
 * sub-modules' titles): dagre keeps no room for a cluster's label, so without it a title would lie
 * under its first nodes or a nested module's title. */
function titleNodes(g: DagreGraph, vis: Visible): void {
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
