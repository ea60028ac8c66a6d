/**
 * A line-first diff for the merge view (its `diffConfig.override`).
 *
 * CodeMirror's merge view diffs characters and, to stay fast, gives up on precision past a
 * scan limit: two 150 kB output codes that differ in a few kernels come out as one
 * changed block. Compiler output is line-shaped, so diff lines first (each distinct line
 * becomes one symbol and CodeMirror's own Myers diff runs on the symbols), then characters
 * inside each changed block that is small enough to read.
 */

import { Change, diff, presentableDiff } from '@codemirror/merge';

export const LINE_DIFF = {
  /** ms for the line-level diff before CodeMirror falls back to its cruder matching */
  timeout: 500,
  /** changed blocks up to this many characters (both sides) are diffed by character */
  charBlock: 10_000,
  /** CodeMirror's own scan limit for the character diff of a block */
  scanLimit: 500
};

/** Symbols from the CJK block: no surrogates, no combining marks. */
const FIRST = 0x4e00;
const LAST = 0x9fff;

/** Lines with their line breaks; the last may lack one. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

function encode(lines: string[], ids: Map<string, number>): string | null {
  let out = '';
  for (const line of lines) {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      if (FIRST + id > LAST) {
        return null;
      }
      ids.set(line, id);
    }
    out += String.fromCharCode(FIRST + id);
  }
  return out;
}

function offsets(lines: string[]): number[] {
  const pos = [0];
  for (const line of lines) {
    pos.push(pos[pos.length - 1] + line.length);
  }
  return pos;
}

/** The changes from `a` to `b` (character positions), found line by line first. */
export function lineDiff(a: string, b: string, limits = LINE_DIFF): readonly Change[] {
  const linesA = splitLines(a);
  const linesB = splitLines(b);
  const ids = new Map<string, number>();
  const symA = encode(linesA, ids);
  const symB = symA === null ? null : encode(linesB, ids);
  if (symA === null || symB === null) {
    // more distinct lines than symbols: CodeMirror's character diff, as the merge view does
    return diff(a, b, { scanLimit: limits.scanLimit });
  }
  const posA = offsets(linesA);
  const posB = offsets(linesB);
  const changes: Change[] = [];
  for (const block of diff(symA, symB, { timeout: limits.timeout })) {
    const fromA = posA[block.fromA];
    const toA = posA[block.toA];
    const fromB = posB[block.fromB];
    const toB = posB[block.toB];
    if (fromA === toA || fromB === toB || toA - fromA + (toB - fromB) > limits.charBlock) {
      changes.push(new Change(fromA, toA, fromB, toB));
      continue;
    }
    const inner = presentableDiff(a.slice(fromA, toA), b.slice(fromB, toB), { scanLimit: limits.scanLimit });
    for (const c of inner) {
      changes.push(new Change(fromA + c.fromA, fromA + c.toA, fromB + c.fromB, fromB + c.toB));
    }
  }
  return changes;
}
