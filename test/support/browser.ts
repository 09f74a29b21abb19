/**
 * Real Chromium for the page tests (Debian's, driven by playwright-core; CI installs it in `.ci/run`): a launcher and
 * a watch on everything a page must not do (console errors and warnings, uncaught errors, dialogs, stray requests).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const SKIP_REASON = `skipped: no browser at ${CHROMIUM} (install it with: apt-get update && apt-get install -y chromium)`;

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What the page did that it must not: filled in as it happens; a test expects it to stay empty. */
export function watchProblems(page: Page, allowedRequest: (url: string) => boolean): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (req) => {
    if (!allowedRequest(req.url())) problems.push(`request: ${req.url()}`);
  });
  return problems;
}

/** A rendered page written where Chromium can open it; HCS25_SCREENSHOTS=DIR keeps a copy named `name` there. */
export function reportPage(html: string, name: string): { url: string; shots: string | undefined } {
  const file = join(mkdtempSync(join(tmpdir(), 'hcs25-page-')), name);
  writeFileSync(file, html);
  const shots = process.env.HCS25_SCREENSHOTS;
  if (shots) writeFileSync(join(shots, name), html);
  return { url: pathToFileURL(file).href, shots };
}

/** Every drawn text smaller than 11 px: its own computed size times its SVG's scale, and CSS-drawn labels. */
export async function smallText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Elem = {
      tagName: string;
      closest(q: string): Elem | null;
      getClientRects(): ArrayLike<unknown>;
      getScreenCTM?(): { a: number; d: number } | null;
    };
    type TextNode = { textContent: string | null; parentElement: Elem | null };
    const g = globalThis as unknown as {
      document: {
        body: unknown;
        createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
        querySelectorAll(q: string): ArrayLike<Elem>;
      };
      getComputedStyle(e: Elem, pseudo?: string): { fontSize: string; visibility: string; content: string };
    };
    const out: string[] = [];
    const hidden = (e: Elem) =>
      e.getClientRects().length === 0 ||
      e.closest('details:not([open]) > :not(summary)') !== null ||
      e.closest('title') !== null ||
      g.getComputedStyle(e).visibility === 'hidden';
    const walker = g.document.createTreeWalker(g.document.body, 4 /* text nodes */);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const e = t.parentElement;
      if (!e || !t.textContent?.trim() || hidden(e)) continue;
      // An SVG's text is drawn at its font size times the viewBox scale (the CTM maps user units to CSS pixels).
      const ctm = e.closest('svg') ? e.getScreenCTM?.() : null;
      const scale = ctm ? Math.min(Math.abs(ctm.a), Math.abs(ctm.d)) : 1;
      const px = Number.parseFloat(g.getComputedStyle(e).fontSize) * scale;
      if (px < 11) out.push(`${e.tagName} ${px.toFixed(1)}px "${t.textContent.trim().slice(0, 30)}"`);
    }
    for (const e of Array.from(g.document.querySelectorAll('body *'))) {
      for (const pseudo of ['::before', '::after']) {
        const css = g.getComputedStyle(e, pseudo);
        if (css.content === 'none' || css.content === 'normal' || css.content === '""' || hidden(e)) continue;
        const px = Number.parseFloat(css.fontSize);
        if (px < 11) out.push(`${e.tagName}${pseudo} ${px.toFixed(1)}px ${css.content.slice(0, 30)}`);
      }
    }
    return [...new Set(out)].slice(0, 12);
  });
}
