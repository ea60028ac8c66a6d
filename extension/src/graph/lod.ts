/**
 * Level of detail: below LOD_SCALE the ops' own labels (11 px in layout units) would be specks,
 * so the view hides them (the class ``pt2x-gv-far`` on its root) and shows instead one label
 * per module box and expanded module, at a fixed size on screen whatever the zoom; where two
 * would overlap, the larger module's wins. At LOD_SCALE and above, the ops' labels show.
 */

import { svg } from './dom';

export const LOD_SCALE = 0.7; // 11 px labels at 7.7 px on screen: the smallest still read
export const LABEL_PX = 12; // the module labels' size on screen
const CHAR_PX = 7.4; // width of a character of the 12 px monospace labels

export interface Group {
  x: number; // layout: centre and size of the box or expanded module
  y: number;
  width: number;
  height: number;
  label: string;
  cluster: boolean; // an expanded module (its label at its top left), else a box (centred)
  act: () => void; // what a click on the label does
}

export class Labels {
  readonly layer: SVGGElement;
  private groups: { g: Group; text: SVGTextElement }[] = [];

  constructor() {
    this.layer = svg('g', { class: 'pt2x-gv-labels' });
  }

  /** The modules drawn now, biggest first (the ones kept where labels collide). */
  set(groups: Group[]): void {
    const sorted = [...groups].sort((a, b) => b.width * b.height - a.width * a.height);
    this.groups = sorted.map(g => {
      const text = svg('text', { class: 'pt2x-gv-label' });
      text.textContent = g.label;
      text.addEventListener('click', ev => {
        ev.stopPropagation();
        g.act();
      });
      return { g, text };
    });
    this.layer.replaceChildren(...this.groups.map(x => x.text));
  }

  /** Place the labels for the transform (x, y, k): a fixed size on screen, no two overlapping. */
  place(tx: number, ty: number, k: number, far: boolean): void {
    if (!far) {
      return;
    }
    const taken: [number, number, number, number][] = [];
    const h = LABEL_PX + 2;
    for (const { g, text } of this.groups) {
      const w = g.label.length * CHAR_PX;
      const cx = tx + g.x * k;
      const cy = ty + g.y * k;
      const left = g.cluster ? cx - (g.width * k) / 2 + 4 : cx - w / 2;
      const top = g.cluster ? cy - (g.height * k) / 2 + 2 : cy - h / 2;
      const free = taken.every(([l, t, r, b]) => left + w <= l || left >= r || top + h <= t || top >= b);
      if (!free) {
        text.setAttribute('display', 'none');
        continue;
      }
      taken.push([left, top, left + w, top + h]);
      text.removeAttribute('display');
      text.setAttribute('x', ((left - tx) / k).toFixed(1));
      text.setAttribute('y', ((top + LABEL_PX - 1 - ty) / k).toFixed(1));
      text.style.fontSize = `${(LABEL_PX / k).toFixed(2)}px`; // a style: the sheet's 11 px would beat an attribute
      text.style.strokeWidth = (3 / k).toFixed(2);
    }
  }
}
