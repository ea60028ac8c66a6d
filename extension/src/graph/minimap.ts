/**
 * The minimap: the whole drawing small in a corner of the stage (a box per module box, node
 * and expanded module, no text) and the part shown now as a rectangle; a click or a drag on it
 * moves the view there.
 */

import { svg } from './dom';

export const MINI_W = 160;
export const MINI_H = 120;

export interface Rect {
  x: number; // layout: centre and size
  y: number;
  width: number;
  height: number;
}

export class Minimap {
  readonly el: SVGSVGElement;
  private shapes: SVGGElement;
  private view: SVGRectElement;

  /** ``goto(x, y)``: centre the view on that point of the layout. */
  constructor(goto: (x: number, y: number) => void) {
    this.el = svg('svg', { class: 'pt2x-gv-mini', width: MINI_W, height: MINI_H });
    this.shapes = svg('g');
    this.view = svg('rect', { class: 'pt2x-gv-mini-view' });
    this.el.append(this.shapes, this.view);
    const at = (ev: PointerEvent) => {
      const m = this.el.getScreenCTM();
      if (!m) {
        return;
      }
      const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
      goto(p.x, p.y);
    };
    this.el.addEventListener('pointerdown', ev => {
      ev.stopPropagation();
      ev.preventDefault();
      this.el.setPointerCapture?.(ev.pointerId);
      at(ev);
    });
    this.el.addEventListener('pointermove', ev => {
      if (ev.buttons & 1) {
        at(ev);
      }
    });
    // the stage's zoom must not see the minimap's wheel and drags
    for (const name of ['wheel', 'mousedown', 'dblclick', 'touchstart']) {
      this.el.addEventListener(name, ev => ev.stopPropagation());
    }
  }

  /** The drawing's size and its shapes: expanded modules, then boxes and nodes. */
  set(width: number, height: number, clusters: Rect[], leaves: Rect[]): void {
    this.el.setAttribute('viewBox', `0 0 ${Math.max(width, 1)} ${Math.max(height, 1)}`);
    const rect = (r: Rect, cls: string) =>
      svg('rect', {
        class: cls,
        x: r.x - r.width / 2,
        y: r.y - r.height / 2,
        width: r.width,
        height: r.height
      });
    this.shapes.replaceChildren(
      ...clusters.map(r => rect(r, 'pt2x-gv-mini-cluster')),
      ...leaves.map(r => rect(r, 'pt2x-gv-mini-leaf'))
    );
  }

  /** The part of the layout a ``width`` × ``height`` stage shows at transform (x, y, k). */
  show(tx: number, ty: number, k: number, width: number, height: number): void {
    this.view.setAttribute('x', (-tx / k).toFixed(1));
    this.view.setAttribute('y', (-ty / k).toFixed(1));
    this.view.setAttribute('width', (width / k).toFixed(1));
    this.view.setAttribute('height', (height / k).toFixed(1));
  }
}
