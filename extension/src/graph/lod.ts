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
  private extent = { width: 0, height: 0 }; // the drawing's, in layout units

  constructor() {
    this.layer = svg('g', { class: 'pt2x-gv-labels' });
  }

  /** The modules drawn now, biggest first (the ones kept where labels collide), in a drawing
   * ``width`` × ``height`` (layout units). A box's label lets clicks through to the boxes
   * under it (its own does what a click on it would); an expanded module's label collapses it,
   * except where it lies on a box (place). */
  set(groups: Group[], width: number, height: number): void {
    this.extent = { width, height };
    const sorted = [...groups].sort((a, b) => b.width * b.height - a.width * a.height);
    this.groups = sorted.map(g => {
      const text = svg('text', { class: g.cluster ? 'pt2x-gv-label' : 'pt2x-gv-label pt2x-gv-label-box' });
      text.textContent = g.label;
      if (g.cluster) {
        text.addEventListener('click', ev => {
          ev.stopPropagation();
          g.act();
        });
      }
      return { g, text };
    });
    this.layer.replaceChildren(...this.groups.map(x => x.text));
  }

  /** Place the labels for the transform (x, y, k): a fixed size on screen, no two overlapping,
   * each inside the drawing's extent on screen (a box's label wider than its box, at the
   * drawing's edge, moved in; one wider than the drawing centred on it), so that what "fit"
   * puts in the box holds its labels too. */
  place(tx: number, ty: number, k: number, far: boolean): void {
    if (!far) {
      return;
    }
    const taken: [number, number, number, number][] = [];
    const h = LABEL_PX + 2;
    const boxes = this.groups
      .filter(({ g }) => !g.cluster)
      .map(({ g }) => [g.x - g.width / 2, g.y - g.height / 2, g.x + g.width / 2, g.y + g.height / 2])
      .map(([l, t, r, b]) => [tx + l * k, ty + t * k, tx + r * k, ty + b * k]);
    const within = (at: number, size: number, lo: number, hi: number) =>
      size >= hi - lo ? (lo + hi - size) / 2 : Math.min(Math.max(at, lo), hi - size);
    for (const { g, text } of this.groups) {
      const w = g.label.length * CHAR_PX;
      const cx = tx + g.x * k;
      const cy = ty + g.y * k;
      const left = within(
        g.cluster ? cx - (g.width * k) / 2 + 4 : cx - w / 2,
        w,
        tx,
        tx + this.extent.width * k
      );
      const top = within(
        g.cluster ? cy - (g.height * k) / 2 + 2 : cy - h / 2,
        h,
        ty,
        ty + this.extent.height * k
      );
      const free = taken.every(([l, t, r, b]) => left + w <= l || left >= r || top + h <= t || top >= b);
      if (!free) {
        text.setAttribute('display', 'none');
        continue;
      }
      taken.push([left, top, left + w, top + h]);
      text.removeAttribute('display');
      // an expanded module's name lying on a box lets the box have its clicks
      const onBox = boxes.some(([l, t, r, b]) => left < r && left + w > l && top < b && top + h > t);
      text.style.pointerEvents = g.cluster && onBox ? 'none' : '';
      text.setAttribute('x', ((left - tx) / k).toFixed(1));
      text.setAttribute('y', ((top + LABEL_PX - 1 - ty) / k).toFixed(1));
      text.style.fontSize = `${(LABEL_PX / k).toFixed(2)}px`; // a style: the sheet's 11 px would beat an attribute
      text.style.strokeWidth = (3 / k).toFixed(2);
    }
  }
}
