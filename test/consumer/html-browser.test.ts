/**
 * The HTML report in a real headless browser (Debian's chromium, driven by playwright-core): it renders, the charts
 * draw, nothing is fetched, no script runs, nothing is logged as an error. CI installs chromium in `.ci/run`.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/consumer/html-report.js';
import { computeScores } from '../../src/consumer/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/consumer/scoring-config.js';
import { HOUR, T0, evalSignal, probe, uaid } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const SKIP_REASON = `skipped: no browser at ${CHROMIUM} (install it with: apt-get update && apt-get install -y chromium)`;
if (!hasChromium) console.warn(`html-browser.test: ${SKIP_REASON}`);

const HOSTILE = `uaid:aid:x;uid=0;proto=a2a;nativeId=<img/src=x/onerror=alert(1)><script>alert(2)</script>`;

function report() {
  const subjects = [uaid('calc.example.com'), uaid('files.mcp.dev', 'mcp'), uaid('slow.example.org', 'openai'), HOSTILE];
  const signals = [];
  let seq = 1;
  for (let run = 0; run < 12; run++) {
    for (const [i, subject] of subjects.entries()) {
      const at = T0 + run * HOUR + i * 1000;
      signals.push(probe(subject, { seq: seq++, at, run, reachable: (run + i) % 5 !== 0, latencyMs: 90 + ((run * 37 + i * 11) % 300) }));
      if (!subject.includes('proto=mcp')) {
        signals.push(evalSignal(subject, 'math', (run + i) % 3 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run }));
        signals.push(evalSignal(subject, 'science', (run + i) % 4 ? 'correct' : 'timeout', { seq: seq++, at: at + 200, run }));
      }
    }
  }
  const r = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + 13 * HOUR), topic: '0.0.1234', publishers: ['0.0.1001'] });
  return { r, html: renderHtmlReport(r, signals, { network: 'local' }) };
}

describe('HTML report in headless Chromium', () => {
  it.skipIf(!hasChromium)(`renders, draws its charts, fetches nothing, logs no errors${hasChromium ? '' : ` (${SKIP_REASON})`}`, async () => {
    const { chromium } = await import('playwright-core');
    const { r, html } = report();
    const file = join(mkdtempSync(join(tmpdir(), 'hcs25-report-')), 'report.html');
    writeFileSync(file, html);
    const url = pathToFileURL(file).href;

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
        if (req.url() !== url) problems.push(`request: ${req.url()}`);
      });
      await page.goto(url, { waitUntil: 'load' });

      expect(await page.title()).toBe('HCS-25 trust scores · topic 0.0.1234');
      expect(await page.locator('table.rank tbody tr').count()).toBe(r.subjects.length);
      // Charts: the two overview charts plus, per subject, one eval chart (MCP has none) and one latency chart.
      const charts = page.locator('svg.chart');
      expect(await charts.count()).toBe(2 + (r.subjects.length - 1) + r.subjects.length);
      // (No DOM lib in this tsconfig: the browser-side callbacks type their elements structurally.)
      type Measurable = { getBoundingClientRect(): { width: number; height: number } };
      for (const box of await charts.evaluateAll((svgs) => svgs.map((s) => { const r = (s as unknown as Measurable).getBoundingClientRect(); return { width: r.width, height: r.height }; }))) {
        expect(box.width).toBeGreaterThan(300);
        expect(box.height).toBeGreaterThan(40);
      }
      const drawnBins = await page
        .locator('svg.hist rect.bin')
        .evaluateAll((rects) => rects.filter((e) => (e as unknown as { getBBox(): { height: number } }).getBBox().height > 0).length);
      expect(drawnBins).toBeGreaterThan(0);
      expect(await page.locator('svg.scatter circle.dot').count()).toBe(r.subjects.length);
      expect(await page.locator('svg.evals circle.outcome').count()).toBe(3 * 12 * 2);
      expect(await page.locator('svg.latency polyline.lat').count()).toBe(r.subjects.length);
      // The hostile subject is text, not markup.
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.getByText('<script>alert(2)</script>', { exact: false }).count()).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
