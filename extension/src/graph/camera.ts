/**
 * The graph view's camera: d3-zoom on the SVG (wheel, drag, the buttons), and the moves the
 * view makes: fit the whole drawing, centre an item, open on the drawing's top or on the
 * focus's nodes. The scale shown is the root's ``data-scale``.
 */

import { select } from 'd3-selection';
import { zoom, zoomIdentity, ZoomBehavior, ZoomTransform } from 'd3-zoom';

import { LOD_SCALE } from './lod';
import { Placed } from './layout';

export class Camera {
  private zoomer: ZoomBehavior<SVGSVGElement, unknown>;

  /** ``zoomed``: after each zoom or pan, with the transform (the viewport's). */
  constructor(
    private readonly svgEl: SVGSVGElement,
    private readonly stage: HTMLElement,
    private readonly root: HTMLElement,
    zoomed: (t: ZoomTransform) => void
  ) {
    this.zoomer = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.02, 4])
      .on('zoom', e => {
        this.root.dataset.scale = e.transform.k.toFixed(4);
        zoomed(e.transform);
      });
    select(this.svgEl).call(this.zoomer).on('dblclick.zoom', null);
  }

  scale(): number {
    return Number(this.root.dataset.scale ?? '1');
  }

  /** The stage's box on screen. */
  box(): DOMRect {
    return this.stage.getBoundingClientRect();
  }

  zoomBy(f: number): void {
    select(this.svgEl).call(this.zoomer.scaleBy, f);
  }

  /** Centre the point (x, y) of the layout at scale ``k`` (the current one by default). */
  centerAt(x: number, y: number, k = this.scale()): void {
    const r = this.box();
    this.to(zoomIdentity.translate(r.width / 2 - x * k, r.height / 2 - y * k).scale(k));
  }

  /** A drawing of ``size`` in the box (``width``: as wide as the box, from its top). */
  fit(size: { width: number; height: number }, width = false): void {
    const r = this.box();
    if (!r.width || !r.height || !size.width) {
      return;
    }
    const sx = (r.width - 8) / size.width;
    const sy = (r.height - 8) / size.height;
    const k = Math.min(width ? sx : Math.min(sx, sy), 2);
    const x = (r.width - size.width * k) / 2;
    const y = width ? 4 : (r.height - size.height * k) / 2;
    this.to(zoomIdentity.translate(x, y).scale(k));
  }

  /** After a fit too small to read: the drawing's start (``first``, the first item drawn) at
   * LOD_SCALE near the top of the box, labels on; nothing where the fit reads (LOD_SCALE and above). */
  openOnTop(first: Placed | undefined, placed: Iterable<Placed>): void {
    const r = this.box();
    if (this.scale() >= LOD_SCALE || !first || !r.width) {
      return;
    }
    const k = LOD_SCALE;
    const top = Math.min(...[...placed].map(p => p.y - p.height / 2));
    this.to(
      zoomIdentity
        .translate(r.width / 2 - first.x * k, 20 - Math.max(top, first.y - first.height / 2 - 40) * k)
        .scale(k)
    );
  }

  /** The ``boxes`` zoomed to fit (at most 1.5) where their labels stay readable (LOD_SCALE),
   * else the densest stretch of them that fits the box (the most of them within one box's
   * height) at LOD_SCALE. */
  focus(boxes: Placed[]): void {
    const r = this.box();
    const bounds = (ps: Placed[]) => [
      Math.min(...ps.map(p => p.x - p.width / 2)),
      Math.max(...ps.map(p => p.x + p.width / 2)),
      Math.min(...ps.map(p => p.y - p.height / 2)),
      Math.max(...ps.map(p => p.y + p.height / 2))
    ];
    let [x0, x1, y0, y1] = bounds(boxes);
    let k = Math.min((r.width - 40) / (x1 - x0), (r.height - 40) / (y1 - y0), 1.5);
    if (k < LOD_SCALE) {
      k = LOD_SCALE;
      const high = (r.height - 40) / k;
      const byY = [...boxes].sort((a, b) => a.y - b.y);
      let best = [0, 1];
      for (let i = 0, j = 0; i < byY.length; i++) {
        while (j < byY.length && byY[j].y - byY[i].y <= high) {
          j++;
        }
        if (j - i > best[1] - best[0]) {
          best = [i, j];
        }
      }
      const dense = byY.slice(best[0], best[1]);
      [x0, x1, y0, y1] = bounds(dense);
      if ((x1 - x0) * k > r.width - 40) {
        // wider than the box: centred on its middle node, across, not on empty space
        const xs = dense.map(p => p.x).sort((a, b) => a - b);
        const mid = xs[Math.floor(xs.length / 2)];
        [x0, x1] = [mid, mid];
      }
    }
    this.centerAt((x0 + x1) / 2, (y0 + y1) / 2, k);
  }

  private to(t: ZoomTransform): void {
    select(this.svgEl).call(this.zoomer.transform, t);
  }
}
