/**
 * Which nodes: the search box's query (``op:addmm module:ln_1 line:123 name:mm_3``, free
 * text), a source line's nodes, a kernel's nodes. No DOM: unit-tested (test/graph.test.ts).
 */

import type { GraphModel } from './model';
import { RawNode, shortTarget } from './data';

/** Nodes of ``m`` matching ``query`` (case-insensitive), in execution order, exact names first.
 * Space-separated terms, all of which must hold: ``op:addmm`` (the node's op or target:
 * where no node has that target, as in a joint graph where ``layer_norm`` became
 * ``var_mean`` and ``rsqrt``, the nodes of the source lines that call it), ``module:ln_1``
 * (its module path), ``line:123`` (its source line's number), ``name:mm_3``, or free text
 * (name, op, target, source line). */
export function searchNodes(m: GraphModel, query: string): number[] {
  const terms = parseQuery(query);
  if (!terms.length) {
    return [];
  }
  const decomposed = new Set(
    terms
      .filter(t => t.field === 'op' && !m.order.some(i => opMatches(m.p.nodes[i], t.value)))
      .map(t => t.value)
  );
  const exact: number[] = [];
  const rest: number[] = [];
  for (const i of m.order) {
    if (!terms.every(t => holds(m, i, t, decomposed))) {
      continue;
    }
    const single = terms.length === 1 && !terms[0].field;
    (single && m.p.nodes[i].n.toLowerCase() === terms[0].value ? exact : rest).push(i);
  }
  return exact.concat(rest);
}

/** The nodes source line ``where`` made (``file.py:12``; fused into ``kernel``, when given). */
export function lineNodes(m: GraphModel, where: string, kernel?: string): number[] {
  return m.p.nodes
    .map((_, j) => j)
    .filter(
      j =>
        m.p.nodes[j].o !== 'placeholder' &&
        m.source(j)?.[0] === where &&
        (kernel === undefined || m.kernel(j) === kernel)
    );
}

/** The nodes fused into ``kernel``. */
export function kernelNodes(m: GraphModel, kernel: string): number[] {
  return m.p.nodes.map((_, j) => j).filter(j => m.kernel(j) === kernel);
}

function holds(m: GraphModel, i: number, t: Term, decomposed: Set<string>): boolean {
  const r = m.p.nodes[i];
  const src = m.source(i);
  const v = t.value;
  switch (t.field) {
    case 'op':
      return decomposed.has(v) ? !!src && (callsOp(src[1], v) || madeThere(src, v)) : opMatches(r, v);
    case 'module':
      return (m.module(i) ?? '').toLowerCase().includes(v);
    case 'line':
      return !!src && lineOf(src[0]) === v;
    case 'name':
      return r.n.toLowerCase() === v || r.n.toLowerCase().startsWith(`${v}_`);
    default:
      return [r.n, r.o, r.t, src ? src[0] : '', src ? src[1] : ''].some(h => h.toLowerCase().includes(v));
  }
}

/** One term of a search: ``op:addmm`` (field "op") or free text (field ""). */
export interface Term {
  field: '' | 'op' | 'module' | 'line' | 'name';
  value: string;
}

export function parseQuery(query: string): Term[] {
  return query
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .map(w => {
      const m = /^(op|module|line|name):(.+)$/.exec(w);
      return m ? { field: m[1] as Term['field'], value: m[2] } : { field: '' as const, value: w };
    });
}

/** The node's op is ``v``: the op its target names (``torch.ops.aten.addmm.default`` and
 * ``torch._C._nn.linear``: ``addmm``, ``linear``; an in-place ``add_`` is ``add``) or its FX op. */
function opMatches(r: RawNode, v: string): boolean {
  const short = shortTarget(r.t);
  const parts = short.split('.');
  const name = (short !== r.t ? (parts[1] ?? parts[0]) : parts[parts.length - 1]).toLowerCase();
  return name === v || name === `${v}_` || r.o.toLowerCase() === v;
}

/** The source line calls ``op`` (``F.layer_norm(``, ``torch.layer_norm(``, ``.layer_norm(``). */
function callsOp(code: string, op: string): boolean {
  return new RegExp(`(^|[^\\w])${op.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*\\(`).test(code.toLowerCase());
}

/** Dynamo's graph made ``op`` at this source line (its third element: ``layer_norm linear``). */
function madeThere(src: [string, string] | [string, string, string], op: string): boolean {
  return (src[2] ?? '').split(' ').includes(op);
}

/** The line number of ``file.py:12`` or ``Cell In[2], line 12``. */
function lineOf(where: string): string {
  const m = /(?::|line )(\d+)$/.exec(where);
  return m ? m[1] : '';
}
