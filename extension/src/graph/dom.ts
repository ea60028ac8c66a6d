/**
 * Small DOM helpers of the graph view: elements made with their class and text (text always
 * through textContent), SVG elements, labels clipped in the middle, the one stylesheet.
 */

import { CSS } from './style';

const SVGNS = 'http://www.w3.org/2000/svg';
const LABEL_MAX = 44; // characters of a label; the row beside the graph holds the rest

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) {
    e.className = cls;
  }
  if (text !== undefined) {
    e.textContent = text;
  }
  return e;
}

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {}
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    e.setAttribute(k, String(v));
  }
  return e;
}

export function clip(text: string): string {
  if (text.length <= LABEL_MAX) {
    return text;
  }
  const half = Math.floor((LABEL_MAX - 1) / 2);
  return `${text.slice(0, half)}…${text.slice(-half)}`;
}

export function injectStyle(doc: Document): void {
  if (!doc.getElementById('pt2x-gv-style')) {
    const s = doc.createElement('style');
    s.id = 'pt2x-gv-style';
    s.textContent = CSS;
    doc.head.appendChild(s);
  }
}
