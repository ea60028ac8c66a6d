/**
 * The graph view's model: the payload explorer/graph/_data.py writes, the nodes grouped by
 * nn.Module in execution order, which groups are expanded, what is visible and the edges
 * between what is visible, search (search.ts). No DOM: unit-tested (test/graph.test.ts).
 *
 * Collapsing keeps the data flow: the nodes are walked in execution order (the graph's own
 * order, each input moved to just before its first reader), and a box is a maximal run of
 * consecutive nodes under one child module of the scope being shown. Ops of the scope itself
 * (a residual add between two blocks) stay single nodes between the boxes, never a hub (a long
 * stretch of them, say a backward pass the recorder found no module for, is one box of its
 * own, "(top level) ops"); a module run twice with other work in between is two boxes. Every box is a contiguous range of
 * one topological order, so every edge between boxes points forward: the drawing is a DAG.
 */

import { Payload, shortTarget } from './data';
import { searchNodes } from './search';

export { SCHEMA, shortTarget, validate } from './data';
export type { Payload, RawNode } from './data';

/** A run of nodes under one module: positions [start, end) of the model's order. */
export interface Segment {
  id: string; // "/transformer/h/0" ("#2" appended for a module's second run in its parent, "~bw" for a backward run)
  path: string; // the module path
  depth: number; // parts of path
  start: number;
  end: number;
  run: number; // 0 for the first run of this module in its parent, 1 for the second...
  own?: boolean; // a run of the scope's own ops (no deeper module): its items are nodes
  back?: boolean; // a run of a joint graph's backward: the backward of its module
}

/** Consecutive ops of a scope itself (no deeper module) shown as one box from this many on;
 * fewer (a residual add between two blocks) stay single nodes. */
export const OWN_RUN = 4;

export type Item = { kind: 'node'; node: number } | { kind: 'seg'; seg: Segment };

export interface Visible {
  leaves: { id: string; item: Item; parent: string | null }[]; // parent: cluster id
  clusters: { seg: Segment; parent: string | null }[]; // expanded segments, outer first
  edges: { from: string; to: string; count: number }[];
  rep: string[]; // node index -> id of the leaf that draws it
}

/** What a module box or cluster is called: its path, "(backward)" for the backward of that
 * module (in a joint graph or a backward graph: however many stretches the backward takes,
 * none of them is a call of the module), "(run 2)" for a module's second forward call in its
 * parent, "ops" for a run of a scope's own ops. */
export function segLabel(s: Segment): string {
  const name = s.own ? `${s.path || '(top level)'} ops` : s.path;
  const note = s.back ? 'backward' : s.run ? `run ${s.run + 1}` : '';
  return note ? `${name} (${note})` : name;
}

/** Marks a key of ``keyAt`` as a run of the backward. */
const BACK = '\u0001';

export const nodeId = (i: number): string => `n${i}`;
export const segId = (s: Segment): string => `s${s.id}`;
export const itemId = (it: Item): string => (it.kind === 'node' ? nodeId(it.node) : segId(it.seg));

export class GraphModel {
  readonly p: Payload;
  readonly order: number[]; // node indices in execution order
  readonly pos: number[]; // node index -> position in order
  readonly parts: string[][]; // node index -> module path split (the group path)
  readonly root: Segment;
  readonly expanded = new Set<string>(); // Segment.id
  private kids = new Map<string, Item[]>();
  private grads: Map<number, number[]> | null = null;

  constructor(p: Payload) {
    this.p = p;
    const n = p.nodes.length;
    this.parts = p.nodes.map(r => {
      const m = r.g ?? r.m;
      return m === undefined ? [] : p.mods[m].split('.');
    });
    // inputs (placeholders, get_attr) just before their first reader: the FX graph lists
    // them all first, which would cut every module's run in two
    const first = new Array<number>(n).fill(-1);
    p.nodes.forEach((r, i) => (r.a ?? []).forEach(a => (first[a] = first[a] < 0 ? i : first[a])));
    const isInput = (i: number) =>
      (p.nodes[i].o === 'placeholder' || p.nodes[i].o === 'get_attr') && first[i] > i;
    // and a value only the output reads (a forward graph's tensors saved for the backward,
    // which AOTAutograd's partitioner lists last) just after the last node it reads, grouped
    // with that node where its own module holds that node's: left at the end, it would start
    // a second run of its module, as if the module were called again
    const output = p.nodes.findIndex(r => r.o === 'output');
    const read = new Array<boolean>(n).fill(false); // read by a node other than the output
    p.nodes.forEach((r, i) => (i === output ? [] : (r.a ?? [])).forEach(a => (read[a] = true)));
    const anchor = (i: number) => Math.max(-1, ...(p.nodes[i].a ?? []).filter(a => !isInput(a)));
    const isSaved = (i: number) => output >= 0 && i !== output && !read[i] && !isInput(i) && anchor(i) >= 0;
    const after = new Map<number, number[]>(); // node -> the saved values placed after it
    for (let i = 0; i < n; i++) {
      if (isSaved(i)) {
        after.set(anchor(i), [...(after.get(anchor(i)) ?? []), i]);
        const [own, at] = [this.parts[i], this.parts[anchor(i)]];
        if (own.length && own.every((x, d) => at[d] === x)) {
          this.parts[i] = at; // a module around that node's (transformer.h around h.1.mlp)
        }
      }
    }
    const order: number[] = [];
    const placed = new Array<boolean>(n).fill(false);
    const put = (i: number) => {
      for (const a of p.nodes[i].a ?? []) {
        if (!placed[a] && isInput(a)) {
          placed[a] = true;
          order.push(a);
        }
      }
      placed[i] = true;
      order.push(i);
      (after.get(i) ?? []).forEach(put);
    };
    for (let i = 0; i < n; i++) {
      if (!isInput(i) && !isSaved(i)) {
        put(i);
      }
    }
    this.order = order;
    this.pos = new Array<number>(n);
    order.forEach((node, k) => (this.pos[node] = k));
    this.root = { id: '', path: '', depth: 0, start: 0, end: n, run: 0 };
    this.expanded.add('');
  }

  /** The items of a segment, in order: single nodes and sub-module runs (cached). */
  children(seg: Segment): Item[] {
    const cached = this.kids.get(seg.id);
    if (cached) {
      return cached;
    }
    const items: Item[] = [];
    const runs = new Map<string, number>();
    const push = (key: string, start: number, end: number, own: boolean) => {
      const run = runs.get(key) ?? 0;
      runs.set(key, run + 1);
      const back = key.endsWith(BACK);
      const name = back ? key.slice(0, -1) : key;
      const path = own ? seg.path : seg.path ? `${seg.path}.${name}` : name;
      const id = `${seg.id}/${name}${back ? '~bw' : ''}${run ? `#${run + 1}` : ''}`;
      const depth = own ? seg.depth : seg.depth + 1;
      const extra = { ...(own ? { own } : {}), ...(back ? { back } : {}) };
      items.push({ kind: 'seg', seg: { id, path, depth, start, end, run, ...extra } });
    };
    if (seg.own) {
      for (let j = seg.start; j < seg.end; j++) {
        items.push({ kind: 'node', node: this.order[j] });
      }
      this.kids.set(seg.id, items);
      return items;
    }
    let k = seg.start;
    while (k < seg.end) {
      const key = this.keyAt(k, seg.depth);
      let e = k + 1;
      while (e < seg.end && this.keyAt(e, seg.depth) === key) {
        e++;
      }
      const own = key === null || key === BACK;
      if (!own && e - k > 1 && key !== '\u0000output') {
        push(key, k, e, false);
      } else if (own && e - k >= OWN_RUN && e - k < seg.end - seg.start) {
        push(`(ops)${key ?? ''}`, k, e, true);
      } else {
        for (let j = k; j < e; j++) {
          items.push({ kind: 'node', node: this.order[j] });
        }
      }
      k = e;
    }
    this.kids.set(seg.id, items);
    return items;
  }

  /** The child module of a scope at ``depth`` that position ``k`` runs in, marked (BACK)
   * in a joint graph's backward; null for the scope's own forward ops (BACK alone for its
   * backward ones); the output node is its own key (never inside a box). */
  private keyAt(k: number, depth: number): string | null {
    const i = this.order[k];
    if (this.p.nodes[i].o === 'output') {
      return '\u0000output';
    }
    const parts = this.parts[i];
    const mod = parts.length > depth ? parts[depth] : null;
    return this.isBackward(i) ? `${mod ?? ''}${BACK}` : mod;
  }

  /** Whether node ``i`` is a node of a joint graph's backward, or of a backward graph. */
  isBackward(i: number): boolean {
    return !!this.p.nodes[i].b || !!this.p.back;
  }

  /** The backward nodes that differentiate forward node ``i`` (torch's seq_nr), in order. */
  gradients(i: number): number[] {
    if (!this.grads) {
      this.grads = new Map();
      for (const j of this.order) {
        const f = this.p.nodes[j].f;
        if (f !== undefined) {
          this.grads.set(f, [...(this.grads.get(f) ?? []), j]);
        }
      }
    }
    return this.grads.get(i) ?? [];
  }

  /** Every module expanded: each node drawn on its own. */
  expandAll(): void {
    const walk = (seg: Segment) => {
      for (const it of this.children(seg)) {
        if (it.kind === 'seg') {
          this.expanded.add(it.seg.id);
          walk(it.seg);
        }
      }
    };
    walk(this.root);
  }

  /** Leaves, clusters and edges of what is shown now. */
  visible(): Visible {
    const leaves: Visible['leaves'] = [];
    const clusters: Visible['clusters'] = [];
    const rep = new Array<string>(this.p.nodes.length);
    const walk = (seg: Segment, parent: string | null) => {
      for (const it of this.children(seg)) {
        const id = itemId(it);
        if (it.kind === 'seg' && this.expanded.has(it.seg.id)) {
          clusters.push({ seg: it.seg, parent });
          walk(it.seg, id);
        } else {
          leaves.push({ id, item: it, parent });
          if (it.kind === 'node') {
            rep[it.node] = id;
          } else {
            for (let k = it.seg.start; k < it.seg.end; k++) {
              rep[this.order[k]] = id;
            }
          }
        }
      }
    };
    walk(this.root, null);
    const counts = new Map<string, number>();
    this.p.nodes.forEach((r, i) => {
      for (const a of r.a ?? []) {
        if (rep[a] !== rep[i]) {
          const key = `${rep[a]}>${rep[i]}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
      }
    });
    const edges = [...counts].map(([key, count]) => {
      const [from, to] = key.split('>');
      return { from, to, count };
    });
    return { leaves, clusters, edges, rep };
  }

  /** How many leaves are shown now. */
  leafCount(): number {
    let count = 0;
    const walk = (seg: Segment) => {
      for (const it of this.children(seg)) {
        if (it.kind === 'seg' && this.expanded.has(it.seg.id)) {
          walk(it.seg);
        } else {
          count++;
        }
      }
    };
    walk(this.root);
    return count;
  }

  /** The first view: the biggest collapsed module expanded while at most ``budget`` leaves
   * are shown (a small graph is shown whole). While fewer than ``few`` leaves are shown, the
   * biggest module is expanded even past the budget (up to 3×): one box says nothing. */
  expandInitial(budget: number, few = 8): void {
    let count = this.leafCount();
    for (;;) {
      const cands: Segment[] = [];
      const walk = (seg: Segment) => {
        for (const it of this.children(seg)) {
          if (it.kind === 'seg') {
            if (this.expanded.has(it.seg.id)) {
              walk(it.seg);
            } else {
              cands.push(it.seg);
            }
          }
        }
      };
      walk(this.root);
      cands.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
      const grow = (s: Segment) => this.children(s).length - 1;
      let next = cands.find(s => count + grow(s) <= budget);
      if (next === undefined && count < few) {
        next = cands.find(s => count + grow(s) <= 3 * budget);
      }
      if (next === undefined) {
        return;
      }
      count += grow(next);
      this.expanded.add(next.id);
    }
  }

  /** The segments holding node ``i``, outermost first (the root left out). */
  ancestors(i: number): Segment[] {
    const out: Segment[] = [];
    const k = this.pos[i];
    let seg = this.root;
    for (;;) {
      const inner = this.children(seg).find(
        it => it.kind === 'seg' && it.seg.start <= k && k < it.seg.end
      ) as { kind: 'seg'; seg: Segment } | undefined;
      if (inner === undefined) {
        return out;
      }
      out.push(inner.seg);
      seg = inner.seg;
    }
  }

  /** Expand whatever hides node ``i``. */
  reveal(i: number): void {
    for (const s of this.ancestors(i)) {
      this.expanded.add(s.id);
    }
  }

  /** Collapse ``seg`` and everything inside it. */
  collapse(seg: Segment): void {
    for (const id of [...this.expanded]) {
      if (id === seg.id || id.startsWith(`${seg.id}/`)) {
        this.expanded.delete(id);
      }
    }
  }

  /** Where node ``i`` came from: ``[where, code]`` or null. */
  source(i: number): [string, string] | [string, string, string] | null {
    const s = this.p.nodes[i].s;
    return s === undefined ? null : this.p.srcs[s];
  }

  /** The kernel node ``i`` was fused into (the fuse view's graph), or null. */
  kernel(i: number): string | null {
    const k = this.p.nodes[i].k;
    return k === undefined ? null : (this.p.kernels?.[k] ?? null);
  }

  module(i: number): string | null {
    const m = this.p.nodes[i].m;
    return m === undefined ? null : this.p.mods[m];
  }

  /** Nodes matching ``query`` (search.ts), in execution order, exact names first. */
  search(query: string): number[] {
    return searchNodes(this, query);
  }

  /** "12× aten.mm, 4× aten.add" of a segment's ops, most frequent first. */
  opCounts(seg: Segment, top = 6): string {
    const counts = new Map<string, number>();
    for (let k = seg.start; k < seg.end; k++) {
      const r = this.p.nodes[this.order[k]];
      if (r.o === 'placeholder' || r.o === 'get_attr') {
        continue;
      }
      const t = shortTarget(r.t);
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const text = sorted
      .slice(0, top)
      .map(([t, c]) => `${c}× ${t}`)
      .join(', ');
    return sorted.length > top ? `${text}, …` : text;
  }
}
