import { describe, expect, it } from 'vitest';

import {
  GraphModel,
  Item,
  Payload,
  RawNode,
  Segment,
  segLabel,
  shortTarget,
  validate
} from '../src/graph/model';
import { kernelNodes, lineNodes } from '../src/graph/search';

/** A payload as explorer/graph/_data.py writes it, from (name, module path, args, extra). */
function payload(rows: [string, string | null, string[], Partial<RawNode>?][]): Payload {
  const mods: string[] = [];
  const index = new Map(rows.map(([n], i) => [n, i]));
  const nodes = rows.map(([n, m, args, extra]) => {
    const r: RawNode = { n, o: 'call_function', t: `torch.ops.aten.${n.split('_')[0]}.default`, ...extra };
    if (m !== null) {
      if (!mods.includes(m)) {
        mods.push(m);
      }
      r.m = mods.indexOf(m);
    }
    if (args.length) {
      r.a = args.map(a => index.get(a) as number);
    }
    return r;
  });
  return { schema: 1, title: 't', n: nodes.length, mods, srcs: [['m.py:12', 'y = attn(x)']], nodes };
}

/** x -> per layer: attn (3 ops, reads its weight), mlp (3 ops), residual add in blocks.i -> loss -> output */
function layered(layers: number): Payload {
  const rows: [string, string | null, string[], Partial<RawNode>?][] = [
    ['x', null, [], { o: 'placeholder' }]
  ];
  const weights: [string, string | null, string[], Partial<RawNode>?][] = [];
  let h = 'x';
  for (let i = 0; i < layers; i++) {
    weights.push([`w${i}`, null, [], { o: 'placeholder' }]);
    let y = h;
    for (const part of ['attn', 'mlp']) {
      for (let k = 0; k < 3; k++) {
        const args = part === 'attn' && k === 0 ? [y, `w${i}`] : [y];
        rows.push([`${part}_${i}_${k}`, `blocks.${i}.${part}`, args, k === 0 ? { s: 0 } : {}]);
        y = `${part}_${i}_${k}`;
      }
    }
    rows.push([`add_${i}`, `blocks.${i}`, [h, y]]);
    h = `add_${i}`;
  }
  rows.push(['loss', null, [h]]);
  rows.push(['output', null, ['loss'], { o: 'output', t: 'output' }]);
  const p = payload([...weights, ...rows]);
  // the weights are collapsed under the attention module that reads them (group path "g")
  p.nodes.slice(0, layers).forEach((r, i) => {
    p.mods.push(`blocks.${i}.attn`);
    r.g = p.mods.indexOf(`blocks.${i}.attn`);
  });
  return p;
}

const show = (items: Item[], m: GraphModel) =>
  items.map(it =>
    it.kind === 'node' ? m.p.nodes[it.node].n : `[${it.seg.id} ${it.seg.end - it.seg.start}]`
  );

describe('collapsing by module keeps the data flow', () => {
  it('puts each input just before its first reader', () => {
    const m = new GraphModel(layered(2));
    expect(m.order.map(i => m.p.nodes[i].n).slice(0, 6)).toEqual([
      'x',
      'w0',
      'attn_0_0',
      'attn_0_1',
      'attn_0_2',
      'mlp_0_0'
    ]);
  });

  it('groups runs of one module in order; ops of the scope itself stay single nodes', () => {
    const m = new GraphModel(layered(3));
    const root = m.children(m.root);
    expect(show(root, m)).toEqual(['x', '[/blocks 24]', 'loss', 'output']);
    const blocks = (root[1] as { kind: 'seg'; seg: any }).seg;
    expect(show(m.children(blocks), m)).toEqual(['[/blocks/0 8]', '[/blocks/1 8]', '[/blocks/2 8]']);
    const b1 = (m.children(blocks)[1] as { kind: 'seg'; seg: any }).seg;
    // the residual add is a node between the boxes, not a box everything points at
    expect(show(m.children(b1), m)).toEqual(['[/blocks/1/attn 4]', '[/blocks/1/mlp 3]', 'add_1']);
  });

  it('draws a module run twice with work in between as two boxes', () => {
    const m = new GraphModel(
      payload([
        ['a', 'enc', []],
        ['b', 'enc', ['a']],
        ['c', 'dec', ['b']],
        ['d', 'dec', ['c']],
        ['e', 'enc', ['d']],
        ['f', 'enc', ['e']]
      ])
    );
    expect(show(m.children(m.root), m)).toEqual(['[/enc 2]', '[/dec 2]', '[/enc#2 2]']);
    expect(m.visible().edges).toEqual([
      { from: 's/enc', to: 's/dec', count: 1 },
      { from: 's/dec', to: 's/enc#2', count: 1 }
    ]);
  });

  it("boxes a long stretch of a scope's own ops; short ones stay nodes", () => {
    const rows: [string, string | null, string[]][] = [
      ['a', 'enc', []],
      ['b', 'enc', ['a']]
    ];
    for (const [k, name] of ['t0', 't1', 't2', 't3'].entries()) {
      rows.push([name, null, [k ? `t${k - 1}` : 'b']]);
    }
    rows.push(['c', 'dec', ['t3']], ['d', 'dec', ['c']], ['u0', null, ['d']], ['u1', null, ['u0']]);
    const m = new GraphModel(payload(rows));
    const root = m.children(m.root);
    expect(show(root, m)).toEqual(['[/enc 2]', '[/(ops) 4]', '[/dec 2]', 'u0', 'u1']);
    const own = (root[1] as { kind: 'seg'; seg: Segment }).seg;
    expect(segLabel(own)).toBe('(top level) ops');
    expect(show(m.children(own), m)).toEqual(['t0', 't1', 't2', 't3']);
  });

  it("names a joint graph's backward runs as the backward of their module, apart from the forward's", () => {
    const m = new GraphModel(
      payload([
        ['a', 'enc', []],
        ['b', 'enc', ['a']],
        ['c', 'dec', ['b']],
        ['d', 'dec', ['c'], { q: 7 }],
        ['t', null, [], { o: 'placeholder', b: 1 }],
        ['e', 'dec', ['t', 'd'], { b: 1, q: 7, f: 3 }],
        ['f', 'dec', ['e', 'c'], { b: 1, q: 7, f: 3 }],
        ['g', 'enc', ['f', 'b'], { b: 1 }],
        ['h', 'enc', ['g'], { b: 1 }]
      ])
    );
    const root = m.children(m.root);
    expect(show(root, m)).toEqual(['[/enc 2]', '[/dec 2]', 't', '[/dec~bw 2]', '[/enc~bw 2]']);
    const labels = root.flatMap(it => (it.kind === 'seg' ? [segLabel(it.seg)] : []));
    expect(labels).toEqual(['enc', 'dec', 'dec (backward)', 'enc (backward)']);
    expect(m.gradients(3)).toEqual([5, 6]);
    expect(m.gradients(2)).toEqual([]);
    m.expandAll();
    expect(m.leafCount()).toBe(9);
  });

  it("names a backward graph's runs as backward, however many stretches they take", () => {
    const p = payload([
      ['t', null, [], { o: 'placeholder' }],
      ['a', 'enc', ['t']],
      ['b', 'enc', ['a']],
      ['c', 'dec', ['b']],
      ['d', 'dec', ['c']],
      ['e', 'enc', ['d']],
      ['f', 'enc', ['e']]
    ]);
    p.back = 1;
    const m = new GraphModel(p);
    const labels = m.children(m.root).flatMap(it => (it.kind === 'seg' ? [segLabel(it.seg)] : []));
    expect(labels).toEqual(['enc (backward)', 'dec (backward)', 'enc (backward)']);
  });

  it('places a value only the output reads (saved for the backward) after what it reads', () => {
    // AOTAutograd's forward graph lists the tensors it saves last: enc's rsqrt after dec's ops
    const m = new GraphModel(
      payload([
        ['x', null, [], { o: 'placeholder' }],
        ['a', 'enc', ['x']],
        ['b', 'enc', ['a']],
        ['c', 'dec.proj', ['b']],
        ['d', 'dec', ['c']],
        ['rsqrt', 'enc', ['a']],
        ['loss', null, ['d']],
        ['t', 'dec', ['c']], // dec's, beside dec.proj's c: grouped with it
        ['output', null, ['loss', 'rsqrt', 't'], { o: 'output', t: 'output' }]
      ])
    );
    const order = ['x', 'a', 'rsqrt', 'b', 'c', 't', 'd', 'loss', 'output'];
    expect(m.order.map(i => m.p.nodes[i].n)).toEqual(order);
    expect(show(m.children(m.root), m)).toEqual(['x', '[/enc 3]', '[/dec 3]', 'loss', 'output']);
    const dec = (m.children(m.root)[2] as { kind: 'seg'; seg: Segment }).seg;
    expect(show(m.children(dec), m)).toEqual(['[/dec/proj 2]', 'd']);
  });

  it('first view: the biggest modules expanded while the leaves fit the budget', () => {
    const m = new GraphModel(layered(3));
    m.expandInitial(12);
    // blocks (0 extra: one run holds the three layers), then each layer (+2 each)
    expect([...m.expanded].sort()).toEqual(['', '/blocks', '/blocks/0', '/blocks/1', '/blocks/2']);
    expect(m.leafCount()).toBe(12);
    // one box says nothing: past the budget (up to 3×) while fewer than `few` leaves show
    const one = new GraphModel(layered(3));
    one.expandInitial(3, 8);
    expect([...one.expanded].sort()).toEqual(['', '/blocks', '/blocks/0']);
    expect(one.leafCount()).toBe(8);
    const small = new GraphModel(layered(3));
    small.expandInitial(1000); // a small graph is shown whole
    expect(small.leafCount()).toBe(small.p.nodes.length);
  });

  it('every edge between what is shown points forward in execution order', () => {
    const m = new GraphModel(layered(4));
    m.expandInitial(10);
    const v = m.visible();
    const order = new Map<string, number>();
    v.rep.forEach((id, i) => order.set(id, Math.min(order.get(id) ?? Infinity, m.pos[i])));
    expect(v.edges.length).toBeGreaterThan(0);
    for (const e of v.edges) {
      expect(order.get(e.from)!).toBeLessThan(order.get(e.to)!);
    }
    expect(v.edges.reduce((s, e) => s + e.count, 0)).toBe(
      m.p.nodes.reduce((s, r, i) => s + (r.a ?? []).filter(a => v.rep[a] !== v.rep[i]).length, 0)
    );
  });
});

describe('search, reveal, collapse', () => {
  it('finds by name (exact first), target and source line, in execution order', () => {
    const m = new GraphModel(layered(2));
    const names = (q: string) => m.search(q).map(i => m.p.nodes[i].n);
    expect(names('add_1')).toEqual(['add_1']);
    expect(names('mlp_1_2')).toEqual(['mlp_1_2']);
    expect(names('m.py:12')).toEqual(['attn_0_0', 'mlp_0_0', 'attn_1_0', 'mlp_1_0']);
    expect(names('aten.loss')).toEqual(['loss']);
    expect(names('  ')).toEqual([]);
  });

  it('reveal expands the modules that hide a node; collapse folds a module and its insides', () => {
    const m = new GraphModel(layered(2));
    const i = m.p.nodes.findIndex(r => r.n === 'mlp_1_1');
    expect(m.ancestors(i).map(s => s.id)).toEqual(['/blocks', '/blocks/1', '/blocks/1/mlp']);
    m.reveal(i);
    expect(m.visible().rep[i]).toBe(`n${i}`);
    const blocks = m.ancestors(i)[0];
    m.collapse(blocks);
    expect([...m.expanded]).toEqual(['']);
    expect(m.visible().rep[i]).toBe('s/blocks');
  });

  it("counts a module box's ops", () => {
    const m = new GraphModel(layered(1));
    const attn = m.ancestors(m.p.nodes.findIndex(r => r.n === 'attn_0_0'))[2];
    expect(m.opCounts(attn)).toBe('3× aten.attn');
  });
});

describe('payload checks', () => {
  it('says what is wrong', () => {
    expect(validate(null)).toBe('the graph data is not an object');
    expect(validate({ schema: 2, nodes: [], mods: [], srcs: [] })).toBe(
      'graph data schema 2 is newer than this view (1): upgrade pt2-explorer'
    );
    expect(validate({ schema: 1, nodes: [] })).toBe('the graph data has no nodes, mods or srcs list');
    expect(validate(layered(1))).toBeNull();
  });

  it('shortens ATen targets', () => {
    expect(shortTarget('torch.ops.aten.mm.default')).toBe('aten.mm');
    expect(shortTarget('torch.ops.prims.convert_element_type.default')).toBe('prims.convert_element_type');
    expect(shortTarget('operator.getitem')).toBe('operator.getitem');
  });
});

describe('search with fields', () => {
  /** A linear layer's matmul, the views its source line also makes, and a layer norm that
   * decomposition turned into var_mean and rsqrt (its source line calls layer_norm). */
  function decomposed(): Payload {
    const p = payload([
      ['x', null, [], { o: 'placeholder' }],
      ['view', 'h.0.attn.c_attn', ['x'], { s: 1 }],
      ['addmm', 'h.0.attn.c_attn', ['view'], { s: 1 }],
      ['view_1', 'h.0.attn.c_attn', ['addmm'], { s: 1 }],
      ['var_mean', 'h.0.ln_1', ['view_1'], { s: 2 }],
      ['rsqrt', 'h.0.ln_1', ['var_mean'], { s: 2 }],
      ['mul', 'h.0.ln_1', ['rsqrt'], { s: 2 }],
      ['addmm_1', 'h.1.attn.c_attn', ['mul'], { s: 3 }],
      ['output', null, ['addmm_1'], { o: 'output', t: 'output' }]
    ]);
    p.srcs.push(
      ['conv.py:106', 'x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)'],
      ['normalization.py:228', 'return F.layer_norm('],
      ['Cell In[2], line 106', 'y = torch.addmm(b, y, w)']
    );
    return p;
  }
  const names = (m: GraphModel, q: string) => m.search(q).map(i => m.p.nodes[i].n);

  it('op: the op itself, not the nodes whose source line mentions it', () => {
    const m = new GraphModel(decomposed());
    expect(names(m, 'op:addmm')).toEqual(['addmm', 'addmm_1']);
    expect(names(m, 'addmm')).toEqual(['addmm', 'view', 'view_1', 'addmm_1']); // free text: exact first
    expect(names(m, 'op:placeholder')).toEqual(['x']);
  });

  it('op: an op decomposed away is found by the source lines that call it', () => {
    const m = new GraphModel(decomposed());
    expect(names(m, 'op:layer_norm')).toEqual(['var_mean', 'rsqrt', 'mul']);
    expect(names(m, 'op:layer_norm op:rsqrt')).toEqual(['rsqrt']);
  });

  it("op: an op decomposed away is found where Dynamo's graph made it (the source line's ops)", () => {
    const p = decomposed();
    p.srcs[2] = ['gpt2.py:273', 'hidden_states = self.ln_1(hidden_states)', 'layer_norm'];
    const m = new GraphModel(p);
    expect(names(m, 'op:layer_norm')).toEqual(['var_mean', 'rsqrt', 'mul']);
    expect(names(m, 'op:linear')).toEqual([]);
  });

  it('module:, line:, name: and free text, all terms holding', () => {
    const m = new GraphModel(decomposed());
    expect(names(m, 'module:ln_1')).toEqual(['var_mean', 'rsqrt', 'mul']);
    expect(names(m, 'line:106')).toEqual(['view', 'addmm', 'view_1', 'addmm_1']);
    expect(names(m, 'line:106 module:h.1')).toEqual(['addmm_1']);
    expect(names(m, 'name:view')).toEqual(['view', 'view_1']);
    expect(names(m, 'op:addmm module:h.0')).toEqual(['addmm']);
    expect(names(m, 'op:nothing')).toEqual([]);
  });

  it("a source line's nodes and a kernel's nodes (the links from the explorer's tables)", () => {
    const p = decomposed();
    p.kernels = ['triton_poi_fused_0', 'extern_kernels.addmm'];
    const kernelOf: Record<string, number> = { view: 0, view_1: 0, var_mean: 0, addmm: 1, addmm_1: 1 };
    p.nodes.forEach(r => (r.k = kernelOf[r.n]));
    const m = new GraphModel(p);
    const of = (js: number[]) => js.map(i => m.p.nodes[i].n);
    expect(of(lineNodes(m, 'conv.py:106'))).toEqual(['view', 'addmm', 'view_1']);
    expect(of(lineNodes(m, 'conv.py:106', 'extern_kernels.addmm'))).toEqual(['addmm']);
    expect(of(lineNodes(m, 'conv.py:107'))).toEqual([]);
    expect(of(kernelNodes(m, 'triton_poi_fused_0'))).toEqual(['view', 'view_1', 'var_mean']);
    expect(of(kernelNodes(m, 'extern_kernels.addmm'))).toEqual(['addmm', 'addmm_1']);
    expect(of(kernelNodes(m, 'triton_poi_fused_1'))).toEqual([]);
  });
});
