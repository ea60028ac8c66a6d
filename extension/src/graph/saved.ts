/**
 * Saved tensors in a joint graph: an edge from a forward node to a backward node that reads
 * it would run the height of the drawing, so none is drawn; the forward box gets a "saved"
 * port below it and the backward box one above it, each listing its connections (hover) and
 * jumping to the other end (click).
 */

import { GraphModel, Visible } from './model';

export interface SavedEnd {
  leaf: string; // the leaf drawn with the port
  pairs: [number, number][]; // (forward node, backward node) read through it
  others: string[]; // the leaves at the other ends
}

/** Whether a leaf of the drawing is on the backward side. */
export function backwardLeaf(m: GraphModel, leaf: Visible['leaves'][number]): boolean {
  return leaf.item.kind === 'node' ? m.isBackward(leaf.item.node) : !!leaf.item.seg.back;
}

/** The saved-tensor edges (forward leaf -> backward leaf) of what is drawn: the keys
 * ``from>to`` of Visible.edges, and each port: sources, then targets. */
export function savedEdges(
  m: GraphModel,
  vis: Visible
): { edges: Set<string>; sources: SavedEnd[]; targets: SavedEnd[] } {
  const back = new Map(vis.leaves.map(l => [l.id, backwardLeaf(m, l)]));
  const edges = new Set<string>();
  const ends = (map: Map<string, SavedEnd>, leaf: string, pair: [number, number], other: string) => {
    const e = map.get(leaf) ?? { leaf, pairs: [], others: [] };
    e.pairs.push(pair);
    if (!e.others.includes(other)) {
      e.others.push(other);
    }
    map.set(leaf, e);
  };
  const sources = new Map<string, SavedEnd>();
  const targets = new Map<string, SavedEnd>();
  m.p.nodes.forEach((r, i) => {
    for (const a of r.a ?? []) {
      const from = vis.rep[a];
      const to = vis.rep[i];
      if (from !== to && back.get(from) === false && back.get(to) === true) {
        edges.add(`${from}>${to}`);
        ends(sources, from, [a, i], to);
        ends(targets, to, [a, i], from);
      }
    }
  });
  return { edges, sources: [...sources.values()], targets: [...targets.values()] };
}

/** The hover text of a port: what it carries, one line per tensor (at most ``max``). */
export function portTitle(m: GraphModel, end: SavedEnd, source: boolean, max = 12): string {
  const by = new Map<number, number[]>();
  for (const [f, b] of end.pairs) {
    const key = source ? f : b;
    by.set(key, [...(by.get(key) ?? []), source ? b : f]);
  }
  const lines = [...by].map(([k, vs]) => {
    const names = vs.map(v => m.p.nodes[v].n);
    const own = m.p.nodes[k].n;
    return source ? `${own} → ${names.join(', ')}` : `${own} ← ${names.join(', ')}`;
  });
  const head = source
    ? `saved for the backward: ${by.size} tensor${by.size > 1 ? 's' : ''} (click: go to the backward)`
    : `reads ${by.size} saved tensor${by.size > 1 ? 's' : ''} of the forward (click: go to the forward)`;
  return [head, ...lines.slice(0, max), ...(lines.length > max ? [`… ${lines.length - max} more`] : [])].join(
    '\n'
  );
}
