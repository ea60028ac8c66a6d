/**
 * The diff payload: its contract, validation, and the plan the view renders.
 *
 * Pure logic (no DOM, no CodeMirror) so that it is unit-tested without a browser:
 * payload validation, the caps that keep the browser responsive, which sections start
 * open, the label texts and the lines to mark.
 *
 * The payload is written by the Python side (explorer/diffs/_diff.py); docs/extension.md
 * documents it.
 */

/** The MIME type this extension renders. */
export const MIME_TYPE = 'application/vnd.pt2-explorer.diff+json';

/** The payload schema this extension reads. */
export const SCHEMA = 1;

/** The languages a section may name; anything else is shown as plain text. */
export const LANGUAGES = ['python', 'cpp', 'triton', 'text'] as const;
export type Language = (typeof LANGUAGES)[number];

/** Caps: the browser must stay responsive whatever Python sends. */
export const LIMITS = {
  /** lines kept per side of a section */
  maxLines: 5000,
  /** characters kept per side of a section */
  maxChars: 500_000,
  /** sections rendered (a collapsed one is only its header: its editor is built on opening);
   * the rest are counted, not shown */
  maxSections: 1000,
  /** changed sections start open only while the lines opened so far stay under this */
  eagerLines: 20_000,
  /** validation errors listed; the rest are counted */
  maxErrors: 10
};

export interface IDiffSection {
  id: string;
  title: string;
  language: string;
  a: string;
  b: string;
  a_marks: number[];
  b_marks: number[];
  changed: boolean;
  note: string | null;
  /** the changed / added / removed lines Python counted ("3 lines changed, 1 added"), shown
   * as it is: one count in every view; null from a payload without it */
  changes: string | null;
}

export interface IDiffPayload {
  schema: number;
  title: string;
  a_label: string;
  b_label: string;
  summary: string[];
  sections: IDiffSection[];
}

export type Validation = { ok: true; payload: IDiffPayload } | { ok: false; errors: string[] };

function kind(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'a list';
  }
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Check a payload against the contract. Unknown keys are ignored (a newer Python may add
 * some); missing optional keys (`summary`, `a_marks`, `b_marks`, `note`) get defaults.
 */
export function validatePayload(data: unknown): Validation {
  const errors: string[] = [];
  if (!isObject(data)) {
    return { ok: false, errors: [`the payload must be an object, got ${kind(data)}`] };
  }
  if (data.schema !== SCHEMA) {
    const newer = typeof data.schema === 'number' && data.schema > SCHEMA;
    errors.push(
      newer
        ? `schema ${data.schema} is newer than this extension reads (${SCHEMA}): upgrade pt2-explorer`
        : `schema: expected ${SCHEMA}, got ${JSON.stringify(data.schema) ?? 'nothing'}`
    );
  }
  const str = (obj: Record<string, unknown>, key: string, where: string): string => {
    const value = obj[key];
    if (typeof value !== 'string') {
      errors.push(`${where}${key}: expected a string, got ${kind(value)}`);
      return '';
    }
    return value;
  };
  const title = str(data, 'title', '');
  const aLabel = str(data, 'a_label', '');
  const bLabel = str(data, 'b_label', '');

  let summary: string[] = [];
  if (data.summary !== undefined) {
    if (!Array.isArray(data.summary)) {
      errors.push(`summary: expected a list of strings, got ${kind(data.summary)}`);
    } else {
      data.summary.forEach((line, i) => {
        if (typeof line !== 'string') {
          errors.push(`summary[${i}]: expected a string, got ${kind(line)}`);
        }
      });
      summary = data.summary.filter((line): line is string => typeof line === 'string');
    }
  }

  const sections: IDiffSection[] = [];
  if (!Array.isArray(data.sections)) {
    errors.push(`sections: expected a list, got ${kind(data.sections)}`);
  } else {
    const seen = new Set<string>();
    data.sections.forEach((raw, i) => {
      const where = `sections[${i}].`;
      if (!isObject(raw)) {
        errors.push(`sections[${i}]: expected an object, got ${kind(raw)}`);
        return;
      }
      const id = str(raw, 'id', where);
      if (id && seen.has(id)) {
        errors.push(`${where}id: "${id}" is used by an earlier section`);
      }
      seen.add(id);
      const marks = (key: string): number[] => {
        const value = raw[key];
        if (value === undefined || value === null) {
          return [];
        }
        if (!Array.isArray(value) || !value.every(n => Number.isInteger(n) && n >= 1)) {
          errors.push(`${where}${key}: expected a list of line numbers (integers from 1)`);
          return [];
        }
        return value as number[];
      };
      if (typeof raw.changed !== 'boolean') {
        errors.push(`${where}changed: expected true or false, got ${kind(raw.changed)}`);
      }
      const note = raw.note;
      if (note !== undefined && note !== null && typeof note !== 'string') {
        errors.push(`${where}note: expected a string or null, got ${kind(note)}`);
      }
      const changes = raw.changes;
      if (changes !== undefined && changes !== null && typeof changes !== 'string') {
        errors.push(`${where}changes: expected a string or null, got ${kind(changes)}`);
      }
      sections.push({
        id,
        title: str(raw, 'title', where),
        language: str(raw, 'language', where),
        a: str(raw, 'a', where),
        b: str(raw, 'b', where),
        a_marks: marks('a_marks'),
        b_marks: marks('b_marks'),
        changed: raw.changed === true,
        note: typeof note === 'string' ? note : null,
        changes: typeof changes === 'string' ? changes : null
      });
    });
  }

  if (errors.length) {
    return { ok: false, errors };
  }
  return {
    ok: true,
    payload: { schema: SCHEMA, title, a_label: aLabel, b_label: bLabel, summary, sections }
  };
}

/** The errors to list, at most `LIMITS.maxErrors`, and a line counting the rest. */
export function errorLines(errors: string[]): string[] {
  const shown = errors.slice(0, LIMITS.maxErrors);
  const more = errors.length - shown.length;
  return more > 0 ? [...shown, `… and ${more} more`] : shown;
}

/** One side of a section after the caps. */
export interface ICapped {
  text: string;
  /** lines in the text received */
  lines: number;
  /** lines kept */
  kept: number;
  /** why it was cut, or null when it is whole */
  cut: string | null;
}

function countLines(text: string): number {
  if (text === '') {
    return 0;
  }
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    n++;
  }
  return text.endsWith('\n') ? n - 1 : n;
}

/** Keep at most `maxLines` lines and `maxChars` characters, cutting at a line end. */
export function capText(
  text: string,
  maxLines: number = LIMITS.maxLines,
  maxChars: number = LIMITS.maxChars
): ICapped {
  const lines = countLines(text);
  let end = text.length;
  let kept = lines;
  let reason = `cut to the first ${maxLines} lines of ${lines}`;
  if (lines > maxLines) {
    let pos = -1;
    for (let i = 0; i < maxLines; i++) {
      pos = text.indexOf('\n', pos + 1);
    }
    end = pos;
    kept = maxLines;
  }
  if (end > maxChars) {
    const size = maxChars >= 1000 ? `${Math.round(maxChars / 1000)} kB` : `${maxChars} characters`;
    const lastBreak = text.lastIndexOf('\n', maxChars);
    if (lastBreak > 0) {
      end = lastBreak;
      kept = countLines(text.slice(0, end));
      reason = `cut to the first ${kept} lines of ${lines} (${size} at most)`;
    } else {
      // the first line alone is longer than the cap: keep its beginning
      end = maxChars;
      kept = 1;
      reason = `cut to the first ${size} of its first line (${lines} lines)`;
    }
  }
  // whole, or all but the final line break
  if (end >= text.length - (text.endsWith('\n') ? 1 : 0)) {
    return { text, lines, kept: lines, cut: null };
  }
  return { text: text.slice(0, end), lines, kept, cut: reason };
}

/** The 1-based lines to mark that exist in the shown text: sorted, without repeats. */
export function markLines(marks: readonly number[], lineCount: number): number[] {
  return [...new Set(marks)].filter(n => n >= 1 && n <= lineCount).sort((x, y) => x - y);
}

/** How the merge view folds unchanged stretches: 3 lines of context, at least 4 folded. */
export const COLLAPSE = { margin: 3, minSize: 4 };

/**
 * Whether folding unchanged stretches keeps every marked line in sight: each within `margin`
 * lines of a changed chunk (chunks as 1-based, inclusive line ranges of that side). A marked
 * line far from any change (a failing guard whose only difference was normalised away) would
 * be folded: the view then does not fold.
 */
export function marksNearChanges(
  marks: readonly number[],
  chunks: readonly (readonly [number, number])[],
  margin: number = COLLAPSE.margin
): boolean {
  return marks.every(m => chunks.some(([from, to]) => m >= from - margin && m <= to + margin));
}

/** The MIME type JupyterLab's language registry knows a section's language by. */
export function languageMime(language: string): string | null {
  switch (language) {
    case 'python':
    case 'triton': // Triton kernels are Python functions
      return 'text/x-python';
    case 'cpp':
      return 'text/x-c++src';
    default:
      return null;
  }
}

/** The badge of a section. */
export function badgeText(changed: boolean): string {
  return changed ? 'changed' : 'no change';
}

/** The count of changes the merge view found: shown next to the badge only when the payload
 * carries no count of its own (`changes`). */
export function chunkText(chunks: number): string {
  return chunks === 0 ? 'no differing lines' : chunks === 1 ? '1 change' : `${chunks} changes`;
}

/** A section as the view renders it. */
export interface ISectionPlan {
  id: string;
  title: string;
  badge: string;
  changed: boolean;
  /** Python's count of the changed lines, shown next to the badge */
  changes: string | null;
  language: string;
  mime: string | null;
  a: ICapped;
  b: ICapped;
  aMarks: number[];
  bMarks: number[];
  /** the notes under the title: Python's note, then what the browser cut */
  notes: string[];
  /** whether the section starts open */
  open: boolean;
}

export interface IDiffPlan {
  title: string;
  aLabel: string;
  bLabel: string;
  summary: string[];
  sections: ISectionPlan[];
  /** a line saying what was left out, or null */
  omitted: string | null;
}

/**
 * What to render, in the payload's order (the Python side orders sections by pipeline
 * stage). Unchanged sections start collapsed; changed ones start open until
 * `LIMITS.eagerLines` lines are open, after that they start collapsed with a note.
 */
export function planDiff(payload: IDiffPayload, limits = LIMITS): IDiffPlan {
  const shown = payload.sections.slice(0, limits.maxSections);
  const hidden = payload.sections.length - shown.length;
  let openLines = 0;
  const sections = shown.map(section => {
    const a = capText(section.a, limits.maxLines, limits.maxChars);
    const b = capText(section.b, limits.maxLines, limits.maxChars);
    const notes: string[] = [];
    if (section.note) {
      notes.push(section.note);
    }
    if (a.cut) {
      notes.push(`left side (${payload.a_label}) ${a.cut} in the browser`);
    }
    if (b.cut) {
      notes.push(`right side (${payload.b_label}) ${b.cut} in the browser`);
    }
    const language = (LANGUAGES as readonly string[]).includes(section.language) ? section.language : 'text';
    if (language !== section.language) {
      notes.push(`language "${section.language}" is not known here: shown as plain text`);
    }
    const lines = Math.max(a.kept, b.kept);
    const aMarks = markLines(section.a_marks, a.kept);
    const bMarks = markLines(section.b_marks, b.kept);
    // a marked line (the guard that failed) is news even where the texts are the same after
    // normalisation: such a section starts open
    let open = section.changed || aMarks.length > 0 || bMarks.length > 0;
    if (open && openLines > 0 && openLines + lines > limits.eagerLines) {
      open = false;
      notes.push(`${lines} lines: collapsed to keep the page responsive, open it to compare`);
    }
    if (open) {
      openLines += lines;
    }
    return {
      id: section.id,
      title: section.title,
      badge: badgeText(section.changed),
      changed: section.changed,
      changes: section.changed ? section.changes : null,
      language,
      mime: languageMime(language),
      a,
      b,
      aMarks,
      bMarks,
      notes,
      open
    };
  });
  return {
    title: payload.title,
    aLabel: payload.a_label,
    bLabel: payload.b_label,
    summary: payload.summary,
    sections,
    omitted:
      hidden > 0
        ? `${hidden} more section${hidden === 1 ? '' : 's'} not shown (at most ${limits.maxSections}): ` +
          'diff two compiles (explorer.diff_compiles) to see theirs'
        : null
  };
}
