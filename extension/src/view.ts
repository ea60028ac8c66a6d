/**
 * The diff as DOM: a header (title, sides, summary), then one block per section with its
 * title, a changed / no-change badge, notes, previous / next change buttons and a merge
 * view. Used by the output renderer and by the main-area panel.
 *
 * Merge views are built when a section is first opened: collapsed sections cost only
 * their header.
 */

import type { MergeView } from '@codemirror/merge';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';

import { createMergeView, goToChunk, languageSupport } from './merge';
import {
  IDiffPayload,
  IDiffPlan,
  ISectionPlan,
  MIME_TYPE,
  SCHEMA,
  chunkText,
  errorLines,
  planDiff
} from './payload';

export interface IDiffViewOptions {
  /** JupyterLab's language registry (syntax highlighting); null: plain text */
  languages: IEditorLanguageRegistry | null;
  /** 'output': in a notebook output (merge views scroll at a fixed height); 'panel': main area */
  mode: 'output' | 'panel';
  /** shows an "Open in main area" button that calls this */
  openInMain?: () => void;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function button(className: string, label: string, title: string, onClick: () => void): HTMLButtonElement {
  const node = el('button', `jp-mod-styled pt2x-diff-button ${className}`, label);
  node.type = 'button';
  node.title = title;
  node.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return node;
}

/** Show why a payload cannot be rendered, in the output area itself. */
export function renderError(host: HTMLElement, headline: string, errors: string[]): void {
  host.replaceChildren();
  const box = el('div', 'pt2x-diff-error');
  box.setAttribute('role', 'alert');
  box.append(el('div', 'pt2x-diff-error-title', `PT2 Explorer could not show this diff: ${headline}`));
  const list = el('ul', 'pt2x-diff-error-list');
  for (const line of errorLines(errors)) {
    list.append(el('li', '', line));
  }
  box.append(list);
  box.append(
    el(
      'div',
      'pt2x-diff-error-hint',
      `(${MIME_TYPE}, schema ${SCHEMA}: see docs/extension.md of pt2-explorer)`
    )
  );
  host.append(box);
}

/** One section: header, notes, and a merge view built on first open. */
class SectionView {
  readonly node: HTMLElement;
  private merge: MergeView | null = null;
  private building: Promise<MergeView | null> | null = null;
  private readonly body: HTMLElement;
  private readonly toggle: HTMLButtonElement;
  private readonly chunks: HTMLElement;
  private readonly nav: HTMLButtonElement[];

  constructor(
    private readonly plan: ISectionPlan,
    diff: IDiffPlan,
    private readonly options: IDiffViewOptions
  ) {
    this.node = el('section', 'pt2x-diff-section');
    this.node.dataset.sectionId = plan.id;
    this.node.dataset.changed = String(plan.changed);
    const header = el('div', 'pt2x-diff-section-header');
    this.toggle = el('button', 'pt2x-diff-toggle');
    this.toggle.type = 'button';
    this.toggle.append(el('span', 'pt2x-diff-caret'), el('span', 'pt2x-diff-section-title', plan.title));
    this.toggle.addEventListener('click', () => void this.setOpen(!this.isOpen));
    const badge = el(
      'span',
      `pt2x-diff-badge ${plan.changed ? 'pt2x-mod-changed' : 'pt2x-mod-same'}`,
      plan.badge
    );
    this.chunks = el('span', 'pt2x-diff-chunks', plan.changes ?? '');
    const language = el('span', 'pt2x-diff-language', plan.language);
    this.nav = [
      button(
        'pt2x-diff-prev',
        '↑ Previous change',
        'Go to the previous change (right side)',
        () => void this.go(-1)
      ),
      button('pt2x-diff-next', '↓ Next change', 'Go to the next change (right side)', () => void this.go(1))
    ];
    header.append(this.toggle, badge, this.chunks, el('span', 'pt2x-diff-spacer'), language, ...this.nav);
    this.node.append(header);
    for (const note of plan.notes) {
      this.node.append(el('div', 'pt2x-diff-note', note));
    }
    this.body = el('div', 'pt2x-diff-body');
    const sides = el('div', 'pt2x-diff-sides');
    sides.append(
      el('div', 'pt2x-diff-side pt2x-diff-side-a', diff.aLabel),
      el('div', 'pt2x-diff-side pt2x-diff-side-b', diff.bLabel)
    );
    this.body.append(sides);
    this.node.append(this.body);
    this.showOpen(false);
  }

  get isOpen(): boolean {
    return this.node.classList.contains('pt2x-mod-open');
  }

  private showOpen(open: boolean): void {
    this.node.classList.toggle('pt2x-mod-open', open);
    this.toggle.setAttribute('aria-expanded', String(open));
    this.body.hidden = !open;
  }

  /** Open or close; the first open builds the merge view. */
  async setOpen(open: boolean): Promise<void> {
    this.showOpen(open);
    if (open) {
      await this.build();
    }
  }

  private build(): Promise<MergeView | null> {
    if (!this.building) {
      this.building = (async () => {
        const language = await languageSupport(this.options.languages, this.plan.mime);
        const host = el('div', 'pt2x-diff-merge');
        this.body.append(host);
        try {
          this.merge = createMergeView(host, this.plan, language);
        } catch (reason) {
          console.error('pt2-explorer: the merge view failed', reason);
          host.replaceChildren(
            el('div', 'pt2x-diff-error', `This section could not be shown: ${String(reason)}`)
          );
          return null;
        }
        const count = this.merge.chunks.length;
        this.chunks.textContent = this.plan.changes ?? chunkText(count);
        this.nav.forEach(b => (b.disabled = count === 0));
        return this.merge;
      })();
    }
    return this.building;
  }

  private async go(dir: 1 | -1): Promise<void> {
    await this.setOpen(true);
    if (this.merge) {
      goToChunk(this.merge, dir);
    }
  }

  dispose(): void {
    this.merge?.destroy();
    this.merge = null;
  }
}

/** A rendered diff; `dispose()` destroys its editors. */
export class DiffView {
  private sections: SectionView[] = [];

  constructor(
    readonly host: HTMLElement,
    private readonly options: IDiffViewOptions
  ) {}

  /** Render a validated payload; resolves when the sections that start open are built. */
  async render(payload: IDiffPayload): Promise<void> {
    this.dispose();
    const plan = planDiff(payload);
    const root = el('div', `pt2x-diff pt2x-mod-${this.options.mode}`);
    const header = el('div', 'pt2x-diff-header');
    header.append(el('div', 'pt2x-diff-title', plan.title));
    // the sides' labels, unless the title already says them ("compile 0/0 vs 0/1")
    if (!plan.title.includes(`${plan.aLabel} vs ${plan.bLabel}`)) {
      const sides = el('div', 'pt2x-diff-labels');
      sides.append(
        el('span', 'pt2x-diff-label-a', plan.aLabel),
        el('span', 'pt2x-diff-vs', 'vs'),
        el('span', 'pt2x-diff-label-b', plan.bLabel)
      );
      header.append(sides);
    }
    header.append(el('span', 'pt2x-diff-spacer'));
    if (this.options.openInMain) {
      const open = this.options.openInMain;
      header.append(
        button('pt2x-diff-open', 'Open in main area', 'Open this diff in a panel of the main area', open)
      );
    }
    root.append(header);
    if (plan.summary.length) {
      const summary = el('ul', 'pt2x-diff-summary');
      for (const line of plan.summary) {
        summary.append(el('li', '', line));
      }
      root.append(summary);
    }
    if (!plan.sections.length) {
      root.append(el('div', 'pt2x-diff-note', 'No sections to compare.'));
    }
    this.sections = plan.sections.map(section => new SectionView(section, plan, this.options));
    root.append(...this.sections.map(s => s.node));
    if (plan.omitted) {
      root.append(el('div', 'pt2x-diff-note pt2x-diff-omitted', plan.omitted));
    }
    this.host.replaceChildren(root);
    await Promise.all(
      plan.sections.map((section, i) => (section.open ? this.sections[i].setOpen(true) : null))
    );
  }

  dispose(): void {
    this.sections.forEach(s => s.dispose());
    this.sections = [];
  }
}
