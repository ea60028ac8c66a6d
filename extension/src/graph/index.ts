/**
 * The graph view, bundled on its own (esbuild, ``npm run build:graph``) into
 * explorer/static/graphview.js: the ES module of the notebook widget (anywidget: its default
 * export's ``render``) and the script of the static page, inlined once, which mounts every
 * ``.pt2x-graph`` element from the JSON in its ``script.pt2x-graph-data`` when it first shows.
 */

import { installLinks } from './links';
import { mount } from './view';

interface AnyModel {
  get(name: string): unknown;
  on(event: string, cb: () => void): void;
  off(event: string, cb: () => void): void;
}

function render({ model, el }: { model: AnyModel; el: HTMLElement }): () => void {
  let dispose = () => {};
  const show = () => {
    dispose();
    dispose = mount(el, JSON.parse(String(model.get('data'))));
  };
  show();
  model.on('change:data', show);
  return () => {
    model.off('change:data', show);
    dispose();
  };
}

/** The static page: mount each graph when it first becomes visible (graphs of hidden tabs
 * cost nothing until opened). */
export function mountStatic(doc: Document = document): void {
  installLinks(doc); // links that open a graph work before any graph is shown (the Why tab's)
  const hosts = Array.from(doc.querySelectorAll<HTMLElement>('.pt2x-graph:not([data-mounted])'));
  const start = (host: HTMLElement) => {
    host.dataset.mounted = '1';
    const data = host.querySelector('script.pt2x-graph-data');
    const view = host.querySelector<HTMLElement>('.pt2x-graph-view');
    if (data && view) {
      mount(view, JSON.parse(data.textContent ?? 'null'));
    }
  };
  const io = new IntersectionObserver(entries => {
    for (const e of entries) {
      if (e.isIntersecting) {
        io.unobserve(e.target);
        start(e.target as HTMLElement);
      }
    }
  });
  hosts.forEach(h => io.observe(h));
}

if (typeof document !== 'undefined' && document.querySelector('.pt2x-graph')) {
  mountStatic();
}

export default { render };
