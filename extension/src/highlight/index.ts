// The static page's code highlighting (explorer/pages/_page.py): the page ships each code block as
// plain text, marked with its language (<pre data-lang="python">), and highlights a block
// when it is first shown. highlight.js with the two languages the explorer shows, bundled by
// `npm run build:highlight` into explorer/static/highlight.js, inlined once per page.
import hljs from 'highlight.js/lib/core';
import cpp from 'highlight.js/lib/languages/cpp';
import python from 'highlight.js/lib/languages/python';

hljs.registerLanguage('python', python);
hljs.registerLanguage('cpp', cpp);

/** Highlights the code blocks under `root` that are shown and not highlighted yet. */
export function highlightShown(root: ParentNode): void {
  root.querySelectorAll<HTMLElement>('pre[data-lang]').forEach(pre => {
    if (!pre.checkVisibility()) {
      return; // in a closed <details>, a hidden tab or compile: when it opens
    }
    const language = pre.dataset.lang ?? '';
    delete pre.dataset.lang;
    if (!hljs.getLanguage(language)) {
      return;
    }
    pre.innerHTML = hljs.highlight(pre.textContent ?? '', { language, ignoreIllegals: true }).value;
    pre.classList.add('hljs');
  });
}

(window as unknown as { pt2xHighlight: typeof highlightShown }).pt2xHighlight = highlightShown;
