/**
 * One section as a CodeMirror 6 merge view: left = a, right = b, both read-only, in
 * JupyterLab's editor theme and language modes, with the marked lines highlighted.
 *
 * @codemirror/view and @codemirror/state are JupyterLab's shared singletons (the build
 * does not bundle them), so the merge view and JupyterLab's theme and languages use the
 * same instances.
 */

import { MergeView, goToNextChunk, goToPreviousChunk } from '@codemirror/merge';
import { EditorState, Extension, RangeSetBuilder, StateField, Text } from '@codemirror/state';
import { Decoration, DecorationSet, EditorView, lineNumbers } from '@codemirror/view';
import { IEditorLanguageRegistry, jupyterTheme } from '@jupyterlab/codemirror';

import { lineDiff } from './linediff';
import { COLLAPSE, ISectionPlan, marksNearChanges } from './payload';

/** Lines first, then characters in small blocks: large outputs keep their chunks, fast. */
export const DIFF_CONFIG = { override: lineDiff };

const markDecoration = Decoration.line({ class: 'pt2x-diff-mark' });

/** Highlight the given 1-based lines (already checked to exist by planDiff). */
function markedLines(lines: readonly number[]): Extension {
  const build = (doc: Text): DecorationSet => {
    const builder = new RangeSetBuilder<Decoration>();
    for (const n of lines) {
      if (n <= doc.lines) {
        const line = doc.line(n);
        builder.add(line.from, line.from, markDecoration);
      }
    }
    return builder.finish();
  };
  return StateField.define<DecorationSet>({
    create: state => build(state.doc),
    update: (value, tr) => value.map(tr.changes),
    provide: field => EditorView.decorations.from(field)
  });
}

/** The language support for a MIME type from JupyterLab's registry; none for plain text. */
export async function languageSupport(
  languages: IEditorLanguageRegistry | null,
  mime: string | null
): Promise<Extension> {
  if (!languages || !mime) {
    return [];
  }
  try {
    const spec = languages.findByMIME(mime);
    const loaded = spec ? await languages.getLanguage(spec) : null;
    return loaded?.support ?? [];
  } catch (reason) {
    console.warn(`pt2-explorer: no syntax highlighting for ${mime}:`, reason);
    return [];
  }
}

function side(marks: readonly number[], language: Extension): Extension[] {
  return [
    EditorState.readOnly.of(true),
    EditorState.tabSize.of(4),
    EditorView.lineWrapping, // no change hidden past the right edge
    lineNumbers(),
    jupyterTheme,
    language,
    markedLines(marks)
  ];
}

/** The lines (1-based, inclusive) each chunk covers on one side. */
function chunkLines(doc: Text, ranges: readonly { from: number; to: number }[]): [number, number][] {
  return ranges.map(({ from, to }) => [doc.lineAt(from).number, doc.lineAt(Math.max(from, to - 1)).number]);
}

/**
 * Build the merge view of a section into `parent`: unchanged stretches folded, unless that
 * would fold a marked line.
 */
export function createMergeView(parent: HTMLElement, section: ISectionPlan, language: Extension): MergeView {
  const view = new MergeView({
    a: { doc: section.a.text, extensions: side(section.aMarks, language) },
    b: { doc: section.b.text, extensions: side(section.bMarks, language) },
    parent,
    gutter: true,
    highlightChanges: true,
    collapseUnchanged: COLLAPSE,
    diffConfig: DIFF_CONFIG
  });
  const a = chunkLines(
    view.a.state.doc,
    view.chunks.map(c => ({ from: c.fromA, to: c.toA }))
  );
  const b = chunkLines(
    view.b.state.doc,
    view.chunks.map(c => ({ from: c.fromB, to: c.toB }))
  );
  if (!marksNearChanges(section.aMarks, a) || !marksNearChanges(section.bMarks, b)) {
    view.reconfigure({ collapseUnchanged: undefined });
  }
  return view;
}

/**
 * Move to the next (dir = 1) or previous (dir = -1) changed chunk, in the right editor,
 * scroll it into view and put the cursor there. False when there is nowhere to go.
 */
export function goToChunk(view: MergeView, dir: 1 | -1): boolean {
  const command = dir > 0 ? goToNextChunk : goToPreviousChunk;
  view.b.focus(); // the cursor shows where the change is; keys work from there
  if (command({ state: view.b.state, dispatch: tr => view.b.dispatch(tr) })) {
    return true;
  }
  // CodeMirror does not move when the cursor is in the only chunk: bring that one back
  const only = view.chunks[0];
  if (!only) {
    return false;
  }
  const pos = Math.min(only.fromB, view.b.state.doc.length);
  view.b.dispatch({
    selection: { anchor: pos },
    effects: EditorView.scrollIntoView(pos, { y: 'center' })
  });
  return true;
}
