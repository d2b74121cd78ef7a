// What the browser tests share: the system's Chromium, painted PNGs (a skin and a cape to look
// at), WCAG contrast, and waits on the page's own state (its view, a message), never on time.
import assert from 'node:assert/strict';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { deflateSync } from 'node:zlib';
import type { Page } from 'puppeteer-core';
import { encodeImage } from './png.ts';

/** The first of `chromium` and `chromium-browser` that the PATH holds as an executable file, else /usr/bin/chromium if it is one. */
export function findChromium(): string | undefined {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  };
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of ['chromium', 'chromium-browser']) {
    for (const dir of dirs) if (executable(join(dir, name))) return join(dir, name);
  }
  return executable('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined;
}

export const CHROMIUM = findChromium();

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// The page's globals as far as the functions run in it touch them: the project's type check has
// no DOM library, so the browser tests declare what they use, here.
declare global {
  const document: {
    activeElement: { id: string; textContent: string | null } | null;
    documentElement: { scrollWidth: number };
    getElementById(id: string): any;
    querySelector(selector: string): { textContent: string | null } | null;
    querySelectorAll(selector: string): any[];
    cookie: string;
  };
  const location: { hash: string };
  function getComputedStyle(element: unknown): { color: string; backgroundColor: string };
  const indexedDB: { databases(): Promise<{ name?: string }[]> };
  const caches: { keys(): Promise<string[]> };
}

/** A form field (a radio button too) or a button, as read in the page. */
export type Field = { value: string; disabled: boolean; checked: boolean };

export type Rgba = [number, number, number, number];
export const RED: Rgba = [220, 40, 40, 255];
export const WHITE: Rgba = [255, 255, 255, 255];
export const GREEN: Rgba = [40, 180, 60, 255];
export const BLUE: Rgba = [40, 80, 220, 255];
export const YELLOW: Rgba = [240, 210, 40, 255];
export const MAGENTA: Rgba = [200, 40, 200, 255];
export const CYAN: Rgba = [40, 200, 210, 255];
export const ORANGE: Rgba = [240, 130, 20, 255];
export const BROWN: Rgba = [120, 70, 30, 255];
export const NAVY: Rgba = [20, 30, 110, 255];
export const OLIVE: Rgba = [120, 130, 30, 255];
export const PINK: Rgba = [250, 150, 190, 255];
export const LIME: Rgba = [150, 240, 60, 255];
export const GREY: Rgba = [120, 120, 120, 255];
export const CLEAR: Rgba = [0, 0, 0, 0];

/** An RGBA PNG of `width`×`height`, transparent but for the given rectangles [x, y, w, h, colour]. */
export function paintedPng(width: number, height: number, rects: [number, number, number, number, Rgba][]): Buffer {
  const row = width * 4 + 1;
  const raw = Buffer.alloc(row * height); // filter type 0 on every row, all pixels transparent
  for (const [x0, y0, w, h, colour] of rects) {
    for (let y = y0; y < y0 + h; y++) for (let x = x0; x < x0 + w; x++) raw.set(colour, y * row + 1 + x * 4);
  }
  return encodeImage({ width, height }, deflateSync(raw));
}

/** A skin to look at (the screenshots too): a face, hair at the back, sleeves, shoes, a head band and a backpack on the overlay. */
export const LOOK_SKIN = ((): Buffer => {
  const [face, hair, shirt, shirtBack, pants, shoes, band, pack]: Rgba[] = [[200, 150, 110, 255], [70, 45, 25, 255], [0, 160, 160, 255], [0, 130, 135, 255], [60, 60, 160, 255], [90, 90, 90, 255], [200, 40, 40, 255], [130, 85, 40, 255]];
  /** A limb at its front x: a sleeve or trousers of `top` rows, then `rest`; the same at its back x. */
  const limb = (front: number, back: number, y: number, top: number, upper: Rgba, lower: Rgba): [number, number, number, number, Rgba][] =>
    [front, back].flatMap((x): [number, number, number, number, Rgba][] => [[x, y, 4, top, upper], [x, y + top, 4, 12 - top, lower]]);
  return paintedPng(64, 64, [
    [8, 8, 8, 8, face], [8, 8, 8, 2, hair], [9, 12, 1, 1, WHITE], [10, 12, 1, 1, BLUE], [13, 12, 1, 1, BLUE], [14, 12, 1, 1, WHITE], [11, 14, 2, 1, hair],
    [24, 8, 8, 8, hair], [40, 9, 8, 1, band], [56, 9, 8, 1, band],
    [20, 20, 8, 12, shirt], [32, 20, 8, 12, shirtBack], [33, 38, 6, 8, pack],
    ...limb(44, 52, 20, 4, shirt, face), ...limb(36, 44, 52, 4, shirt, face),
    ...limb(4, 12, 20, 9, pants, shoes), ...limb(20, 28, 52, 9, pants, shoes),
  ]);
})();
/** A cape to look at: dark red with a gold band. */
export const LOOK_CAPE = paintedPng(64, 32, [[1, 1, 10, 16, [150, 20, 30, 255]], [1, 3, 10, 1, [230, 180, 40, 255]]]);

/** WCAG 2's contrast ratio of two CSS colours as getComputedStyle gives them (rgb() or rgba(), opaque). */
export function contrast(a: string, b: string): number {
  const luminance = (css: string): number => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => Number(v) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/** Each element's text colour and the background it sits on (its own, else the nearest ancestor's that is not transparent). */
export const colours = (page: Page, selectors: string[]): Promise<[string, string, string][]> =>
  page.evaluate(
    (list) =>
      list.map((selector): [string, string, string] => {
        let at: any = document.querySelector(selector);
        const color = getComputedStyle(at).color;
        while (at && getComputedStyle(at).backgroundColor === 'rgba(0, 0, 0, 0)') at = at.parentElement;
        return [selector, color, at ? getComputedStyle(at).backgroundColor : 'rgb(255, 255, 255)'];
      }),
    selectors,
  );

export const textOf = (page: Page, selector: string): Promise<string> => page.$eval(selector, (e) => (e.textContent ?? '').trim());

export async function waitForView(page: Page, view: string): Promise<void> {
  await page.waitForSelector(`#app[data-view="${view}"]`, { timeout: 15_000 });
}

/** Waits until the element's text is `text` (a form's message, say), and fails with what it holds instead. */
export async function waitForText(page: Page, selector: string, text: string): Promise<void> {
  try {
    await page.waitForFunction((s, t) => document.querySelector(s)?.textContent?.trim() === t, { timeout: 15_000 }, selector, text);
  } catch {
    assert.fail(`${selector} says ${JSON.stringify(await textOf(page, selector))}, not ${JSON.stringify(text)}`);
  }
}

/** The focused element: its id, or a button's text. */
export const focused = (page: Page): Promise<string | undefined> => page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent?.trim());
