import { describe, expect, it } from 'vitest';

import {
  LIMITS,
  MIME_TYPE,
  badgeText,
  capText,
  chunkText,
  errorLines,
  languageMime,
  markLines,
  marksNearChanges,
  planDiff,
  validatePayload
} from '../src/payload';

/** The payload of the contract's example (docs/extension.md). */
function example(): Record<string, any> {
  return {
    schema: 1,
    title: 'compile 0/0 vs 0/1',
    a_label: '0/0',
    b_label: '0/1',
    summary: ['guards: 1 changed', 'kernels: 1 added'],
    sections: [
      {
        id: 'guards',
        title: 'Guards',
        language: 'python',
        a: "L['x'].size()[0] == 4\nL['y'] is None\n",
        b: "L['x'].size()[0] == 6\nL['y'] is None\n",
        a_marks: [1],
        b_marks: [],
        changed: true,
        note: null,
        changes: '1 line changed'
      },
      {
        id: 'kernel',
        title: 'Kernel cpp_fused_relu_0',
        language: 'cpp',
        a: 'void kernel() {}\n',
        b: 'void kernel() {}\n',
        a_marks: [],
        b_marks: [],
        changed: false,
        note: 'cut to the first 5000 lines of 21000'
      }
    ]
  };
}

describe('validatePayload', () => {
  it('accepts the contract example and keeps its fields', () => {
    const result = validatePayload(example());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.payload.title).toBe('compile 0/0 vs 0/1');
    expect(result.payload.sections.map(s => s.id)).toEqual(['guards', 'kernel']);
    expect(result.payload.sections[0].a_marks).toEqual([1]);
    expect(result.payload.sections[1].note).toBe('cut to the first 5000 lines of 21000');
    expect(result.payload.sections.map(s => s.changes)).toEqual(['1 line changed', null]);
    expect(planDiff(result.payload).sections.map(s => s.changes)).toEqual(['1 line changed', null]);
  });

  it('defaults the optional keys and ignores unknown ones', () => {
    const data = example();
    delete data.summary;
    delete data.sections[0].a_marks;
    delete data.sections[0].note;
    data.extra = 'from a newer Python';
    const result = validatePayload(data);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.payload.summary).toEqual([]);
    expect(result.payload.sections[0].a_marks).toEqual([]);
    expect(result.payload.sections[0].note).toBeNull();
  });

  it('names every field that is wrong, with its path', () => {
    const data = example();
    data.title = 3;
    data.sections[0].a = null;
    data.sections[0].changed = 'yes';
    data.sections[1].b_marks = [0, 2];
    data.sections[1].id = 'guards';
    data.sections[1].changes = 2;
    const result = validatePayload(data);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      'title: expected a string, got a number',
      'sections[0].changed: expected true or false, got a string',
      'sections[0].a: expected a string, got null',
      'sections[1].id: "guards" is used by an earlier section',
      'sections[1].changes: expected a string or null, got a number',
      'sections[1].b_marks: expected a list of line numbers (integers from 1)'
    ]);
  });

  it('refuses what is not a payload at all', () => {
    expect(validatePayload('a string')).toEqual({
      ok: false,
      errors: ['the payload must be an object, got a string']
    });
    expect(validatePayload([])).toEqual({ ok: false, errors: ['the payload must be an object, got a list'] });
    const noSections = validatePayload({ schema: 1, title: '', a_label: '', b_label: '' });
    expect(noSections).toEqual({ ok: false, errors: ['sections: expected a list, got a undefined'] });
  });

  it('says when the schema is newer than this extension', () => {
    const data = example();
    data.schema = 2;
    expect(validatePayload(data)).toEqual({
      ok: false,
      errors: ['schema 2 is newer than this extension reads (1): upgrade pt2-explorer']
    });
    delete data.schema;
    expect(validatePayload(data)).toEqual({ ok: false, errors: ['schema: expected 1, got nothing'] });
  });

  it('lists at most maxErrors errors and counts the rest', () => {
    const errors = Array.from({ length: 14 }, (_, i) => `e${i}`);
    const lines = errorLines(errors);
    expect(lines).toHaveLength(LIMITS.maxErrors + 1);
    expect(lines[LIMITS.maxErrors]).toBe('… and 4 more');
    expect(errorLines(['one'])).toEqual(['one']);
  });
});

describe('capText', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('keeps text under the caps whole', () => {
    expect(capText('a\nb\n', 2, 100)).toEqual({ text: 'a\nb\n', lines: 2, kept: 2, cut: null });
    expect(capText('', 2, 100)).toEqual({ text: '', lines: 0, kept: 0, cut: null });
  });

  it('cuts to the first maxLines lines and says so', () => {
    const capped = capText(lines(12), 5, 10_000);
    expect(capped.text).toBe('line 1\nline 2\nline 3\nline 4\nline 5');
    expect(capped.kept).toBe(5);
    expect(capped.lines).toBe(12);
    expect(capped.cut).toBe('cut to the first 5 lines of 12');
  });

  it('cuts at a line end under maxChars', () => {
    const capped = capText(lines(100), 5000, 19); // "line 1\nline 2\nline 3" is 20 characters
    expect(capped.text).toBe('line 1\nline 2');
    expect(capped.cut).toBe('cut to the first 2 lines of 100 (19 characters at most)');
  });

  it('cuts one long line to maxChars', () => {
    const capped = capText('x'.repeat(3000) + '\nshort\n', 5000, 2000);
    expect(capped.text).toBe('x'.repeat(2000));
    expect(capped.kept).toBe(1);
    expect(capped.cut).toBe('cut to the first 2 kB of its first line (2 lines)');
  });

  it('handles the default caps on a large input quickly', () => {
    const big = lines(LIMITS.maxLines * 4);
    const start = Date.now();
    const capped = capText(big);
    expect(capped.kept).toBe(LIMITS.maxLines);
    expect(capped.text.split('\n')).toHaveLength(LIMITS.maxLines);
    expect(capped.cut).toBe(`cut to the first ${LIMITS.maxLines} lines of ${LIMITS.maxLines * 4}`);
    expect(Date.now() - start).toBeLessThan(1000);
  });
});

describe('labels and marks', () => {
  it('marks existing lines once, in order', () => {
    expect(markLines([3, 1, 3, 9, 0], 5)).toEqual([1, 3]);
    expect(markLines([], 5)).toEqual([]);
  });

  it('maps languages to JupyterLab MIME types; Triton is Python', () => {
    expect(languageMime('python')).toBe('text/x-python');
    expect(languageMime('triton')).toBe('text/x-python');
    expect(languageMime('cpp')).toBe('text/x-c++src');
    expect(languageMime('text')).toBeNull();
  });

  it('words badges and change counts', () => {
    expect(badgeText(true)).toBe('changed');
    expect(badgeText(false)).toBe('no change');
    expect([0, 1, 4].map(chunkText)).toEqual(['no differing lines', '1 change', '4 changes']);
  });

  it('exports the MIME type of the contract', () => {
    expect(MIME_TYPE).toBe('application/vnd.pt2-explorer.diff+json');
  });
});

describe('planDiff', () => {
  function payload(data = example()) {
    const result = validatePayload(data);
    if (!result.ok) throw new Error(result.errors.join('; '));
    return result.payload;
  }

  it('keeps the payload order; changed sections open, unchanged ones collapsed', () => {
    const plan = planDiff(payload());
    expect(plan.sections.map(s => [s.id, s.open, s.badge])).toEqual([
      ['guards', true, 'changed'],
      ['kernel', false, 'no change']
    ]);
    expect(plan.sections[0].aMarks).toEqual([1]);
    expect(plan.sections[1].notes).toEqual(['cut to the first 5000 lines of 21000']);
    expect(plan.sections[1].mime).toBe('text/x-c++src');
    expect(plan.omitted).toBeNull();
  });

  it('caps sections in the browser and says which side was cut', () => {
    const data = example();
    data.sections[0].b = Array.from({ length: 30 }, (_, i) => `g${i}`).join('\n');
    data.sections[0].b_marks = [2, 25];
    const plan = planDiff(payload(data), { ...LIMITS, maxLines: 20 });
    const guards = plan.sections[0];
    expect(guards.b.kept).toBe(20);
    expect(guards.bMarks).toEqual([2]); // line 25 is cut away
    expect(guards.notes).toEqual(['right side (0/1) cut to the first 20 lines of 30 in the browser']);
  });

  it('renders at most maxSections sections and counts the rest', () => {
    const data = example();
    data.sections = Array.from({ length: 7 }, (_, i) => ({ ...data.sections[0], id: `s${i}` }));
    const plan = planDiff(payload(data), { ...LIMITS, maxSections: 5 });
    expect(plan.sections).toHaveLength(5);
    expect(plan.omitted).toBe(
      '2 more sections not shown (at most 5): diff two compiles (explorer.diff_compiles) to see theirs'
    );
  });

  it('opens a section that marks a line even when its texts are the same, and does not fold it', () => {
    const data = example();
    // an ID_MATCH guard that failed: its id is the only difference, normalised away
    data.sections[1] = { ...data.sections[0], id: 'same', b: data.sections[0].a, changed: false };
    const plan = planDiff(payload(data));
    const same = plan.sections[1];
    expect([same.open, same.badge, same.aMarks]).toEqual([true, 'no change', [1]]);
  });

  it('folds only while every marked line stays within the margin of a change', () => {
    expect(marksNearChanges([8], [[8, 8]])).toBe(true); // the failing guard is the changed line
    expect(marksNearChanges([11], [[8, 8]])).toBe(true); // 3 lines of margin
    expect(marksNearChanges([12], [[8, 8]])).toBe(false);
    expect(marksNearChanges([5], [])).toBe(false); // nothing changed: folding would hide it
    expect(marksNearChanges([], [])).toBe(true);
  });

  it('collapses changed sections past the eager line budget, with a note', () => {
    const data = example();
    const text = Array.from({ length: 40 }, (_, i) => `l${i}`).join('\n');
    data.sections = ['a', 'b', 'c'].map(id => ({ ...data.sections[0], id, a: text, b: text + '\nnew' }));
    const plan = planDiff(payload(data), { ...LIMITS, eagerLines: 60 });
    expect(plan.sections.map(s => s.open)).toEqual([true, false, false]);
    expect(plan.sections[1].notes).toEqual([
      '41 lines: collapsed to keep the page responsive, open it to compare'
    ]);
  });

  it('always opens the first changed section, however large', () => {
    const data = example();
    data.sections[0].b = 'x\n'.repeat(100);
    const plan = planDiff(payload(data), { ...LIMITS, eagerLines: 10 });
    expect(plan.sections[0].open).toBe(true);
  });

  it('shows an unknown language as plain text, with a note', () => {
    const data = example();
    data.sections[0].language = 'cuda';
    const plan = planDiff(payload(data));
    expect(plan.sections[0].language).toBe('text');
    expect(plan.sections[0].mime).toBeNull();
    expect(plan.sections[0].notes).toEqual(['language "cuda" is not known here: shown as plain text']);
  });
});
