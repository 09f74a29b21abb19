/**
 * The HTML report's layout with a realistic fleet, in headless Chromium at a phone (390×844) and a laptop (1280×800):
 * a dozen agents with ~140-character UAIDs, long names, four protocols, several at one score and confidence, and no
 * publisher allow-list (its warning sits above the ranking). The page never scrolls sideways, the ranking starts on
 * the first screen, and every piece of drawn text (SVG text as scaled with its chart, labels drawn by CSS) is 11 px
 * or more. HCS25_SCREENSHOTS=DIR saves full-page screenshots.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html-report.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { SKIP_REASON, hasChromium, launchChromium, reportPage, smallText, watchProblems } from '../support/browser.js';
import { HOUR, T0, evalSignal, probe, runId, uaid } from '../support/signals.js';

const PROTOCOLS = ['a2a', 'mcp', 'rest', 'openai'] as const;

/** Twelve agents; agents 8–11 share the signals of agent 7 (one point in the scatter), 5 and 6 share one too. */
function fleet() {
  const subjects = Array.from({ length: 12 }, (_, i) => {
    const host = `agent-${String(i).padStart(2, '0')}-${'n'.repeat(20)}.inference.example-registry.com:8443`;
    return uaid(host, PROTOCOLS[i % 4]!, i % 3 === 0 ? 'erc-8004' : 'hol');
  });
  const labels = Object.fromEntries(
    // As long as a registry name is shown (MAX_NAME_LENGTH).
    subjects.map((s, i) => [s, `Autonomous research assistant ${String(i).padStart(2, '0')} (EU west, beta)`]),
  );
  const signals = [];
  let seq = 1;
  for (let run = 0; run < 6; run++) {
    for (const [i, subject] of subjects.entries()) {
      const k = i >= 7 ? 7 : i === 6 ? 5 : i;
      const at = T0 + run * HOUR + i * 1000;
      signals.push(probe(subject, { seq: seq++, at, run, reachable: (run + k) % 4 !== 0, latencyMs: 80 + k * 40 }));
      if (!subject.includes('proto=mcp'))
        signals.push(
          evalSignal(subject, 'math', (run + k) % 3 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run }),
          evalSignal(subject, 'science', (run * k) % 5 ? 'correct' : 'timeout', { seq: seq++, at: at + 200, run }),
        );
    }
  }
  const r = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + 7 * HOUR), topic: '0.0.1234', labels });
  // The live page's parts too: mirror links on every signal, and runs with their reveal and verdict in words.
  const counts = { 're-derived': 20, 'commitment-checked': 2, 'not-checkable': 12, mismatch: 0, equivocation: 0 };
  const runs = Array.from({ length: 6 }, (_, run) => ({
    run: runId(5 - run),
    signals: 34,
    firstAt: new Date(T0 + (5 - run) * HOUR).toISOString(),
    lastAt: new Date(T0 + (5 - run) * HOUR + 11_000).toISOString(),
    revealed: run > 0,
    verification: run === 1 ? null : run === 2 ? { ...counts, mismatch: 3, equivocation: 1 } : counts,
    links:
      run > 0
        ? {
            hashscan: `https://hashscan.io/testnet/transaction/${1_800_000_000 + run}.000000001`,
            mirror: `https://testnet.mirrornode.hedera.com/api/v1/topics/0.0.1234/messages/${1000 + run}`,
          }
        : null,
  }));
  const html = renderHtmlReport(r, signals, {
    network: 'testnet',
    scoring: DEFAULT_SCORING_CONFIG,
    mirrorRestUrl: 'https://testnet.mirrornode.hedera.com',
    runs,
    runsMore: true,
  });
  return { r, subjects, html };
}

/**
 * Text whose contrast with what it is drawn on is under WCAG AA (4.5:1; 3:1 from 24 px): HTML text against the first
 * opaque background behind it, and the counts drawn on the scatter's dots against their dot.
 */
async function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Elem = {
      tagName: string;
      parentElement: Elem | null;
      previousElementSibling: Elem | null;
      closest(q: string): Elem | null;
      getClientRects(): ArrayLike<unknown>;
    };
    type TextNode = { textContent: string | null; parentElement: Elem | null };
    type Style = { color: string; fill: string; backgroundColor: string; fontSize: string };
    const g = globalThis as unknown as {
      document: { body: unknown; createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null } };
      getComputedStyle(e: Elem): Style;
    };
    const rgba = (c: string) => {
      const [r = 0, gr = 0, b = 0, a = 1] = (c.match(/[\d.]+/g) ?? []).map(Number);
      return { rgb: [r, gr, b], a: c.startsWith('rgba') ? a : 1 };
    };
    const lum = (rgb: number[]) => {
      const [r, gr, b] = rgb.map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * gr! + 0.0722 * b!;
    };
    const ratio = (x: number[], y: number[]) => {
      const [hi, lo] = [lum(x), lum(y)].sort((a, b) => b - a);
      return (hi! + 0.05) / (lo! + 0.05);
    };
    const out: string[] = [];
    const walker = g.document.createTreeWalker(g.document.body, 4);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const e = t.parentElement;
      if (!e || !t.textContent?.trim() || e.getClientRects().length === 0 || e.closest('title')) continue;
      const inSvg = e.closest('svg') !== null;
      if (inSvg && !e.closest('text.count')) continue;
      const css = g.getComputedStyle(e);
      const fg = rgba(inSvg ? css.fill : css.color).rgb;
      let bg = [255, 255, 255];
      if (inSvg) bg = rgba(g.getComputedStyle(e.previousElementSibling!).fill).rgb;
      else
        for (let a: Elem | null = e; a; a = a.parentElement) {
          const c = rgba(g.getComputedStyle(a).backgroundColor);
          if (c.a === 1) {
            bg = c.rgb;
            break;
          }
        }
      const need = Number.parseFloat(css.fontSize) >= 24 ? 3 : 4.5;
      const r = ratio(fg, bg);
      if (r < need)
        out.push(
          `${e.tagName}.${(e as unknown as { getAttribute(n: string): string }).getAttribute('class')} ${r.toFixed(2)} "${t.textContent.trim().slice(0, 20)}"`,
        );
    }
    return [...new Set(out)].slice(0, 12);
  });
}

async function layout(page: Page) {
  return page.evaluate(() => {
    type Box = { top: number; bottom: number };
    const d = (globalThis as unknown as { document: Record<string, unknown> }).document as unknown as {
      scrollingElement: { scrollWidth: number };
      querySelector(q: string): { getBoundingClientRect(): Box } | null;
    };
    return {
      scrollWidth: d.scrollingElement.scrollWidth,
      rankTop: d.querySelector('table.rank')?.getBoundingClientRect().top ?? Number.NaN,
      firstRowBottom: d.querySelector('table.rank tbody tr')?.getBoundingClientRect().bottom ?? Number.NaN,
    };
  });
}

describe('HTML report layout with a realistic fleet', () => {
  it.skipIf(!hasChromium)(
    `fits 390 and 1280 px, ranking on the first screen, no text under 11 px${hasChromium ? '' : ` (${SKIP_REASON})`}`,
    async () => {
      const { r, html } = fleet();
      // The fleet is what the test claims: long UAIDs and several subjects at one point.
      expect(r.subjects).toHaveLength(12);
      expect(Math.min(...r.subjects.map((s) => s.subject.length))).toBeGreaterThanOrEqual(140);
      const points = new Set(r.subjects.map((s) => `${s.trustScores.total}|${s.trustConfidence}`));
      expect(points.size).toBeLessThanOrEqual(r.subjects.length - 4);
      expect(r.publishers.filter).toBe('none');

      // Who shares a numbered dot is written out, not only in a tooltip.
      for (const [score, confidence] of [...points].map((p) => p.split('|').map(Number)))
        if (r.subjects.filter((s) => s.trustScores.total === score && s.trustConfidence === confidence).length > 1)
          expect(html).toContain(`at score ${score!.toFixed(2)}, confidence ${confidence!.toFixed(2)}: ranks #`);

      const { url, shots } = reportPage(html, 'layout.html');
      const browser = await launchChromium();
      try {
        for (const [width, height] of [
          [1280, 800],
          [390, 844],
          // Between phone and laptop, where charts are drawn a little smaller than their own size.
          [640, 900],
          [768, 1024],
        ] as const) {
          const page = await browser.newPage({ viewport: { width, height } });
          const problems = watchProblems(page, (u) => u === url);
          await page.goto(url, { waitUntil: 'load' });
          const at = `at ${width}×${height}`;
          const box = await layout(page);
          expect(box.scrollWidth, `page width ${at}`).toBeLessThanOrEqual(width);
          expect(box.rankTop, `ranking top ${at}`).toBeLessThan(height / 2);
          expect(box.firstRowBottom, `first ranked subject ${at}`).toBeLessThanOrEqual(height);
          expect(await smallText(page), `text under 11 px ${at}`).toEqual([]);
          expect(await lowContrast(page), `text under AA contrast ${at}`).toEqual([]);
          // Opened drill-downs must not widen the page either.
          await page.locator('details').evaluateAll((ds) => {
            for (const d of ds) (d as unknown as { open: boolean }).open = true;
          });
          expect((await layout(page)).scrollWidth, `page width with details open ${at}`).toBeLessThanOrEqual(width);
          expect(await smallText(page), `text under 11 px with details open ${at}`).toEqual([]);
          // Each row tells its subject apart: its UAID line shows the native id's start, and nothing is clipped.
          const lines = await page.locator('table.rank td.subject .uaid').evaluateAll((es) =>
            es.map((e) => {
              const x = e as unknown as { textContent: string; scrollWidth: number; clientWidth: number };
              return { text: x.textContent.replace(/\s/g, ''), clipped: x.scrollWidth > x.clientWidth + 1 };
            }),
          );
          expect(lines.map((l) => l.text.match(/nativeId=(agent-\d\d)/)?.[1])).toEqual(
            r.subjects.map((s) => s.subject.match(/nativeId=(agent-\d\d)/)?.[1]),
          );
          expect(
            lines.filter((l) => l.clipped),
            `clipped UAIDs ${at}`,
          ).toEqual([]);
          if (shots) await page.screenshot({ path: join(shots, `layout-${width}.png`), fullPage: true });
          expect(problems).toEqual([]);
          await page.close();
        }
      } finally {
        await browser.close();
      }
    },
  );
});
