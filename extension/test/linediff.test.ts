import { describe, expect, it } from 'vitest';

import { lineDiff } from '../src/linediff';

/** Apply the changes to `a`; also check the unchanged stretches agree. */
function apply(
  a: string,
  b: string,
  changes: readonly { fromA: number; toA: number; fromB: number; toB: number }[]
) {
  let out = '';
  let posA = 0;
  let posB = 0;
  for (const c of changes) {
    expect(a.slice(posA, c.fromA)).toBe(b.slice(posB, c.fromB));
    out += a.slice(posA, c.fromA) + b.slice(c.fromB, c.toB);
    posA = c.toA;
    posB = c.toB;
  }
  expect(a.slice(posA)).toBe(b.slice(posB));
  return out + a.slice(posA);
}

function output(n: number, changed: (i: number) => boolean): string {
  let text = '';
  for (let i = 0; i < n; i++) {
    text += `buf${i} = empty_strided((${i + (changed(i) ? 1 : 0)},), (1,))\n`;
  }
  return text;
}

describe('lineDiff', () => {
  it('finds each changed line of a large text, down to the characters', () => {
    const a = output(5000, () => false);
    const b = output(5000, i => i % 97 === 0);
    const changes = lineDiff(a, b);
    expect(apply(a, b, changes)).toBe(b);
    expect(changes).toHaveLength(52); // one per changed line: i = 0, 97, ..., 4947
    const second = changes[1]; // line 98: "(97," became "(98,", the word changed
    expect(a.slice(second.fromA, second.toA)).toBe('97');
    expect(b.slice(second.fromB, second.toB)).toBe('98');
  });

  it('keeps insertions and deletions of whole lines whole', () => {
    const a = 'def f(x):\n    y = x + 1\n    return y\n';
    const b = 'def f(x):\n    z = x * 2\n    y = x + 1\n    return y\n';
    const changes = lineDiff(a, b);
    expect(changes).toHaveLength(1);
    expect(b.slice(changes[0].fromB, changes[0].toB)).toBe('    z = x * 2\n');
    expect(changes[0].fromA).toBe(changes[0].toA);
    expect(apply(a, b, changes)).toBe(b);
    expect(apply(b, a, lineDiff(b, a))).toBe(a);
  });

  it('handles texts without a final newline, and empty ones', () => {
    for (const [a, b] of [
      ['x = 1', 'x = 2'],
      ['x = 1\n', 'x = 1'],
      ['', 'a\nb\n'],
      ['a\nb\n', ''],
      ['', '']
    ]) {
      expect(apply(a, b, lineDiff(a, b))).toBe(b);
    }
  });

  it('stays fast on two unrelated large texts', () => {
    let a = '';
    let b = '';
    for (let i = 0; i < 5000; i++) {
      a += `tmp${(i * 7919) % 5003} = torch.ops.aten.mul.Tensor(x${i % 13}, ${Math.sin(i).toFixed(6)})\n`;
      b += `    float v${i} = in_ptr0[${(i * 31) % 977}] * ${Math.cos(i).toFixed(5)}f;\n`;
    }
    const start = Date.now();
    const changes = lineDiff(a, b);
    expect(Date.now() - start).toBeLessThan(3000); // CodeMirror's timeout is 500 ms
    expect(apply(a, b, changes)).toBe(b);
  });

  it('falls back to the character diff past the symbols it has', () => {
    const many = (tag: string) => Array.from({ length: 12_000 }, (_, i) => `${tag}${i}\n`).join('');
    const a = many('a');
    const b = many('b');
    expect(apply(a, b, lineDiff(a, b))).toBe(b);
  });
});
