/**
 * PT2 Explorer's JupyterLab extension: renders application/vnd.pt2-explorer.diff+json as
 * side-by-side CodeMirror merge views, and the command pt2-explorer:open-diff opens a
 * diff in the main area.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { IDiffPayload, MIME_TYPE } from './payload';
import { DiffPanel, rendererFactory } from './renderer';

export { MIME_TYPE };

/** The command: args {payload?: the diff}; without one, the last diff rendered. */
export const OPEN_DIFF = 'pt2-explorer:open-diff';

/** Preferred over text/html (rank 50): the HTML fallback is for renderers without us. */
const RANK = 10;

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'pt2-explorer:diff',
  description: 'Side-by-side diffs of torch.compile stages (CodeMirror merge view).',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [IEditorLanguageRegistry, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    languages: IEditorLanguageRegistry | null,
    palette: ICommandPalette | null
  ) => {
    let last: IDiffPayload | null = null;
    let count = 0;

    app.commands.addCommand(OPEN_DIFF, {
      label: 'Open PT2 Explorer Diff in Main Area',
      caption: 'Open a torch.compile diff (the last one shown, or args.payload) as a panel',
      isEnabled: args => args.payload !== undefined || last !== null,
      execute: async (args: ReadonlyPartialJSONObject) => {
        const data = args.payload ?? last;
        if (data === null || data === undefined) {
          return null;
        }
        const content = new DiffPanel(data, languages);
        const widget = new MainAreaWidget({ content });
        widget.id = `pt2x-diff-${++count}`;
        widget.addClass('pt2x-diff-main');
        const payload = data as Partial<IDiffPayload>;
        widget.title.label = typeof payload.title === 'string' && payload.title ? payload.title : 'PT2 diff';
        widget.title.caption = `PT2 Explorer diff: ${widget.title.label}`;
        widget.title.closable = true;
        app.shell.add(widget, 'main');
        app.shell.activateById(widget.id);
        await content.ready;
        return widget.id;
      }
    });
    palette?.addItem({ command: OPEN_DIFF, category: 'PT2 Explorer' });

    rendermime.addFactory(
      rendererFactory({
        languages,
        openInMain: payload =>
          void app.commands.execute(OPEN_DIFF, { payload: payload as unknown as ReadonlyPartialJSONObject }),
        rendered: payload => {
          last = payload;
        }
      }),
      RANK
    );
  }
};

export default plugin;
