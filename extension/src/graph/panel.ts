/**
 * The graph view's panel beside the drawing: the row of what was selected (a node, a module
 * box, a source line's nodes, a kernel's nodes), with links: to codegen and to the nodes and
 * kernels of the same line (links.ts follows them), and between a joint graph's forward and
 * backward nodes (a click jumps there). Every text goes in through textContent.
 */

import { GraphModel, Segment, segLabel } from './model';
import { el } from './dom';

type Rows = [string, string | Node][];

export class Panel {
  readonly el: HTMLDivElement;

  /** ``jump``: select node ``i`` in the drawing (the links between forward and backward). */
  constructor(
    private readonly m: GraphModel,
    private readonly jump: (i: number) => void
  ) {
    this.el = el('div', 'pt2x-gv-info');
    this.el.append(el('div', 'pt2x-gv-note', 'Click a node to see its row, a module box to expand it.'));
  }

  /** A line instead of a row (a search that matched nothing). */
  hint(text: string): void {
    this.el.replaceChildren(el('div', 'pt2x-gv-hint', text));
  }

  /** A module box's row: its name, its size, its ops counted. */
  segment(seg: Segment): void {
    this.rows([
      ['module', segLabel(seg)],
      ['nodes', String(seg.end - seg.start)],
      ['ops', this.m.opCounts(seg, 12)]
    ]);
  }

  /** Node ``i``'s row: its kernel links to its row in codegen; the nodes and kernels its
   * source line made link to themselves (links.ts). */
  node(i: number): void {
    const m = this.m;
    const r = m.p.nodes[i];
    const src = m.source(i);
    const mod = m.module(i);
    const args = (r.a ?? []).map(a => m.p.nodes[a].n);
    const kernel = m.kernel(i);
    const rows: Rows = [
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
    this.rows([...rows, ...this.gradRows(i)]);
  }

  /** Source line ``where``'s row: its code, its nodes (``mine``) and their kernels. */
  line(where: string, mine: number[]): void {
    const src = this.m.source(mine[0]);
    this.rows([
      ['source', where],
      ['code', src ? src[1] : ''],
      ['made', this.lineLinks(this.m.p.nodes[mine[0]].s ?? -1)]
    ]);
  }

  /** ``kernel``'s row: its nodes (``mine``), its source lines, a link to its code. */
  kernel(kernel: string, mine: number[]): void {
    const m = this.m;
    const nodes = el('span');
    mine.forEach((j, n) =>
      nodes.append(
        n ? ', ' : '',
        link('pt2x-node-link', m.p.nodes[j].n, { node: m.p.nodes[j].n }, 'select it')
      )
    );
    const lines = [...new Set(mine.map(j => m.source(j)?.[0]).filter((x): x is string => !!x))];
    this.rows([
      ['kernel', link('pt2x-code-link', kernel, { kernel }, 'its row and source in codegen')],
      ['nodes', nodes],
      ['count', String(mine.length)],
      ['source lines', lines.join(', ')]
    ]);
  }

  private rows(rows: Rows): void {
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
    this.el.replaceChildren(table);
  }

  /** A joint graph node's side, seq_nr and links: from a backward node to the forward node
   * it differentiates, from a forward node to its backward nodes (torch's seq_nr). */
  private gradRows(i: number): Rows {
    const m = this.m;
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
    const m = this.m;
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
