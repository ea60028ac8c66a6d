/**
 * The MIME renderer for application/vnd.pt2-explorer.diff+json (one renderer per MIME
 * type), and the widget the main-area panel shows. A payload that fails validation is
 * shown as an error in the output area itself.
 */

import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { IDiffPayload, MIME_TYPE, validatePayload } from './payload';
import { DiffView, renderError } from './view';

export interface IRendererDeps {
  languages: IEditorLanguageRegistry | null;
  /** open a (valid) payload in the main area */
  openInMain: (payload: IDiffPayload) => void;
  /** told of each valid payload rendered (the command's default target) */
  rendered: (payload: IDiffPayload) => void;
}

/** Validate and render `data` into `view`, or show what is wrong with it. */
async function show(view: DiffView, data: unknown): Promise<IDiffPayload | null> {
  const checked = validatePayload(data);
  if (!checked.ok) {
    view.dispose();
    renderError(view.host, 'the payload does not match the format this extension reads.', checked.errors);
    return null;
  }
  try {
    await view.render(checked.payload);
  } catch (reason) {
    console.error('pt2-explorer: rendering the diff failed', reason);
    view.dispose();
    renderError(view.host, 'rendering failed.', [String(reason)]);
    return null;
  }
  return checked.payload;
}

export class DiffRenderer extends Widget implements IRenderMime.IRenderer {
  private readonly view: DiffView;
  private payload: IDiffPayload | null = null;

  constructor(
    private readonly mimeType: string,
    private readonly deps: IRendererDeps
  ) {
    super();
    this.addClass('pt2x-diff-output');
    this.view = new DiffView(this.node, {
      languages: deps.languages,
      mode: 'output',
      openInMain: () => this.payload && deps.openInMain(this.payload)
    });
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this.payload = await show(this.view, model.data[this.mimeType]);
    if (this.payload) {
      this.deps.rendered(this.payload);
    }
  }

  dispose(): void {
    if (!this.isDisposed) {
      this.view.dispose();
    }
    super.dispose();
  }
}

export function rendererFactory(deps: IRendererDeps): IRenderMime.IRendererFactory {
  return {
    // renders text only (textContent, CodeMirror): nothing in a payload runs or is parsed as HTML
    safe: true,
    mimeTypes: [MIME_TYPE],
    createRenderer: options => new DiffRenderer(options.mimeType, deps)
  };
}

/** The content of the main-area panel: the same diff, at full height. */
export class DiffPanel extends Widget {
  private readonly view: DiffView;

  constructor(data: unknown, languages: IEditorLanguageRegistry | null) {
    super();
    this.addClass('pt2x-diff-panel');
    this.view = new DiffView(this.node, { languages, mode: 'panel' });
    this.ready = show(this.view, data);
  }

  /** resolves when the sections that start open are built */
  readonly ready: Promise<IDiffPayload | null>;

  dispose(): void {
    if (!this.isDisposed) {
      this.view.dispose();
    }
    super.dispose();
  }
}
