/**
 * The graph view's data: the payload explorer/graph/_data.py writes (one row per FX node,
 * short keys), checked before anything is drawn, and the short op names the view prints.
 */

export const SCHEMA = 1;

export interface RawNode {
  n: string; // name
  o: string; // op
  t: string; // target
  d?: string; // dtype + shape
  s?: number; // index into srcs
  m?: number; // index into mods: the node's own module path
  g?: number; // index into mods: the path it is collapsed under, when not m
  i?: number; // 1: the module path was inferred from neighbours
  a?: number[]; // arg node indices
  c?: string; // kernel colour
  k?: number; // index into kernels: the kernel the node was fused into
  b?: number; // 1: a node of a joint graph's backward
  q?: number; // torch's seq_nr
  f?: number; // the forward node a backward node differentiates (node index)
}

export interface Payload {
  schema: number;
  title: string;
  n: number;
  mods: string[];
  srcs: ([string, string] | [string, string, string])[]; // where, code, the ops Dynamo's graph made there
  nodes: RawNode[];
  kernels?: string[]; // the fuse view's kernel names
  focus?: number[]; // where the view opens: the nodes of the compile's most expensive kernel
  focusWhy?: string; // which kernel, and why it is the most expensive
  back?: number; // 1: a backward graph, every node of it a backward one
}

/** Why a payload cannot be shown, or null. */
export function validate(p: unknown): string | null {
  if (typeof p !== 'object' || p === null) {
    return 'the graph data is not an object';
  }
  const o = p as Record<string, unknown>;
  if (typeof o.schema !== 'number' || o.schema > SCHEMA) {
    return `graph data schema ${String(o.schema)} is newer than this view (${SCHEMA}): upgrade pt2-explorer`;
  }
  if (!Array.isArray(o.nodes) || !Array.isArray(o.mods) || !Array.isArray(o.srcs)) {
    return 'the graph data has no nodes, mods or srcs list';
  }
  return null;
}

/** ``torch.ops.aten.mm.default`` -> ``aten.mm``; other targets as torch printed them. */
export function shortTarget(target: string): string {
  if (target.startsWith('torch.ops.')) {
    return target.slice('torch.ops.'.length).split('.').slice(0, 2).join('.');
  }
  return target;
}
