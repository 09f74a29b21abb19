/**
 * The HTML report in a real headless browser (Debian's chromium, driven by playwright-core): it renders, the charts
 * draw, it explains itself (outcome words, reasons, the formula, the order of ties, a drill-down per signal with
 * HashScan links), it fits a 390 px screen, nothing is fetched, no script runs, nothing is logged as an error.
 * CI installs chromium in `.ci/run`. HCS25_SCREENSHOTS=DIR saves full-page screenshots at 1280 and 390 px.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html-report.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { HOUR, T0, evalSignal, probe, signalV2, uaid } from '../support/signals.js';
import { SKIP_REASON, hasChromium, launchChromium, reportPage, smallText, watchProblems } from '../support/browser.js';

if (!hasChromium) console.warn(`html-browser.test: ${SKIP_REASON}`);

const HOSTILE = `uaid:aid:x;uid=0;proto=a2a;nativeId=<img/src=x/onerror=alert(1)><script>alert(2)</script>`;
const ONE_RUN = uaid('one-run.example.net');
/** As real registries have them: a UAID of ~140 characters, a long name, a long reason in its newest outcomes. */
const WIDE = uaid(`wide-agent-${'x'.repeat(40)}.agents.example.com:8443`, 'rest');
/** Two subjects with the same signals: equal score and confidence, ordered by name. */
const TIE_B = uaid('tie-b.example.com');
const TIE_A = uaid('tie-a.example.com');
const LABELS = {
  [TIE_B]: 'Alpha tie',
  [TIE_A]: 'Beta tie',
  [ONE_RUN]: 'One-run agent',
  [WIDE]: 'A rather long agent name from a registry listing',
};
const OUTCOME_WORDS = [
  'correct',
  'wrong',
  'unparseable',
  'timeout',
  'unreachable',
  'error',
  'not measured',
  'reachable',
];

function report(network: string) {
  const subjects = [
    uaid('calc.example.com'),
    uaid('files.mcp.dev', 'mcp'),
    uaid('slow.example.org', 'openai'),
    HOSTILE,
    TIE_B,
    TIE_A,
  ];
  const signals = [];
  let seq = 1;
  for (let run = 0; run < 12; run++) {
    for (const [i, subject] of subjects.entries()) {
      const at = T0 + run * HOUR + i * 1000;
      const k = subject === TIE_A || subject === TIE_B ? 7 : i;
      signals.push(
        probe(subject, {
          seq: seq++,
          at,
          run,
          reachable: (run + k) % 5 !== 0,
          latencyMs: 90 + ((run * 37 + k * 11) % 300),
        }),
      );
      if (!subject.includes('proto=mcp')) {
        signals.push(
          evalSignal(subject, 'math', (run + k) % 3 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run }),
        );
        signals.push(
          evalSignal(subject, 'science', (run + k) % 4 ? 'correct' : 'timeout', { seq: seq++, at: at + 200, run }),
        );
      }
    }
  }
  // One run, v2, packed (one message, indexes 0..2), everything failed: each failure carries its reason.
  const at = T0 + 12 * HOUR;
  signals.push(
    signalV2(ONE_RUN, 'probe', 'unreachable', { seq, at, run: 99, index: 0, reason: 'connect-refused' }),
    signalV2(ONE_RUN, 'math', 'unparseable', { seq, at, run: 99, index: 1, reason: 'refusal' }),
    signalV2(ONE_RUN, 'science', 'timeout', { seq, at, run: 99, index: 2, reason: 'timeout' }),
    signalV2(WIDE, 'probe', 'reachable', { seq: seq + 1, at, run: 98, index: 0 }),
    signalV2(WIDE, 'math', 'skipped', { seq: seq + 1, at, run: 98, index: 1, reason: 'not-chat-capable' }),
    signalV2(WIDE, 'science', 'skipped', { seq: seq + 1, at, run: 98, index: 2, reason: 'not-chat-capable' }),
  );
  const options = { now: new Date(T0 + 13 * HOUR), topic: '0.0.1234', publishers: ['0.0.1001'], labels: LABELS };
  const r = computeScores(signals, DEFAULT_SCORING_CONFIG, options);
  const again = computeScores([...signals].reverse(), DEFAULT_SCORING_CONFIG, options);
  return { r, again, signals, html: renderHtmlReport(r, signals, { network, scoring: DEFAULT_SCORING_CONFIG }) };
}

// (No DOM lib in this tsconfig: the browser-side callbacks type their elements structurally.)
type El = {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelectorAll(q: string): ArrayLike<El>;
};
type Measurable = { getBoundingClientRect(): { width: number; height: number } };

/**
 * At this viewport: no table scrolls sideways, the ranking starts within the first screen, and every piece of text on
 * the page is drawn at 11 px or more (an SVG's text as scaled with its chart).
 */
async function expectReadable(page: Page, width: number, height: number): Promise<void> {
  await page.setViewportSize({ width, height });
  await page.evaluate(() => (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0));
  const sideways = await page.locator('.tablewrap').evaluateAll(
    (ws) =>
      ws.filter((w) => {
        const e = w as unknown as { scrollWidth: number; clientWidth: number };
        return e.scrollWidth > e.clientWidth + 1;
      }).length,
  );
  expect(sideways, `tables scrolling sideways at ${width} px`).toBe(0);
  const rankTop = await page
    .locator('table.rank')
    .evaluate((t) => (t as unknown as { getBoundingClientRect(): { top: number } }).getBoundingClientRect().top);
  expect(rankTop, `ranking top at ${width} px`).toBeLessThan(height - 100);
  const small = await smallText(page);
  expect(small, `text under 11 px at ${width} px`).toEqual([]);
}

describe('HTML report in headless Chromium', () => {
  it.skipIf(!hasChromium)(
    `renders, explains itself, fits a phone, fetches nothing, logs no errors${hasChromium ? '' : ` (${SKIP_REASON})`}`,
    async () => {
      const { r, again, signals, html } = report('testnet');
      const { url, shots } = reportPage(html, 'report.html');

      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const problems = watchProblems(page, (u) => u === url);
        await page.goto(url, { waitUntil: 'load' });

        expect(await page.title()).toBe('HCS-25 trust scores · topic 0.0.1234');
        expect(await page.locator('table.rank tbody tr').count()).toBe(r.subjects.length);

        // Ties keep a stable order: score, then confidence, then name. Alpha/Beta are named against their hosts' order.
        const order = await page
          .locator('table.rank tbody tr')
          .evaluateAll((rows) => rows.map((e) => (e as unknown as El).getAttribute('data-subject')));
        expect(order).toEqual(r.subjects.map((s) => s.subject));
        expect(again.subjects.map((s) => s.subject)).toEqual(r.subjects.map((s) => s.subject));
        const tieRanks = [TIE_B, TIE_A].map((s) => r.subjects.findIndex((x) => x.subject === s));
        expect(r.subjects[tieRanks[0]!]!.trustScores.total).toBe(r.subjects[tieRanks[1]!]!.trustScores.total);
        expect(tieRanks[1]).toBe(tieRanks[0]! + 1);
        const tieNames = await page.locator('table.rank td.subject > a').allTextContents();
        expect(tieNames.slice(tieRanks[0], tieRanks[0]! + 2)).toEqual(['Alpha tie', 'Beta tie']);
        expect(await page.locator('section.method').textContent()).toContain(
          'then by name (or native id), then by UAID',
        );

        // Outcome words, never a bare "ok"; the same newest word in the ranking and in the subject's card.
        const words = await page.locator('.oc').allTextContents();
        expect(words.length).toBeGreaterThan(0);
        expect(words.every((w) => OUTCOME_WORDS.includes(w))).toBe(true);
        expect(await page.getByText('ok', { exact: true }).count()).toBe(0);
        const rank = r.subjects.findIndex((s) => s.subject === ONE_RUN) + 1;
        const rowWords = await page.locator(`table.rank tbody tr:nth-child(${rank}) td.outcomes .oc`).allTextContents();
        expect(rowWords.sort()).toEqual(['timeout', 'unparseable', 'unreachable']);
        const cardWords = await page.locator(`#s${rank} table.comps .oc`).allTextContents();
        expect(cardWords.sort()).toEqual(rowWords);
        // Each failure names its reason.
        const reasons = await page.locator(`#s${rank} table.comps .reason`).allTextContents();
        expect(reasons.sort()).toEqual(['connect-refused', 'refusal', 'timeout']);
        expect(await page.locator('section.method').textContent()).toContain('the TCP connection was refused');

        // The total's formula and weights, confidence in a sentence, the HCS-25 text linked.
        const explain = (await page.locator('section.explain').textContent()) ?? '';
        expect(explain).toContain('total = Σ wa · Ta / Σ wa');
        expect(explain).toContain('availability weight 1 (universal)');
        expect(explain).toContain('simple-math weight 0.5 (scoped)');
        expect(explain).toMatch(/Confidence \(0–1\) says how much evidence backs a score/);
        expect(await page.locator('a[href="https://hol.org/docs/standards/hcs-25"]').count()).toBeGreaterThan(0);
        const formulas = await page.locator('article p.formula').allTextContents();
        expect(formulas).toHaveLength(r.subjects.length);
        for (const [i, s] of r.subjects.entries())
          expect(formulas[i]).toMatch(new RegExp(`^total = \\(.*\\) / [0-9.]+ = ${s.trustScores.total.toFixed(2)}$`));

        // One run is not a history: no time axis for the one-run subject, a sentence instead.
        expect(await page.locator(`#s${rank} svg.chart`).count()).toBe(0);
        expect(await page.locator(`#s${rank} p.single`).count()).toBe(2);
        // Everyone else (WIDE has one run too): one eval chart (MCP has none) and one latency chart.
        const charts = page.locator('svg.chart');
        expect(await charts.count()).toBe(2 + (r.subjects.length - 3) + (r.subjects.length - 2));
        for (const box of await charts.evaluateAll((svgs) =>
          svgs.map((s) => {
            const r = (s as unknown as Measurable).getBoundingClientRect();
            return { width: r.width, height: r.height };
          }),
        )) {
          expect(box.width).toBeGreaterThan(300);
          expect(box.height).toBeGreaterThan(40);
        }
        const drawnBins = await page
          .locator('svg.hist rect.bin')
          .evaluateAll(
            (rects) =>
              rects.filter((e) => (e as unknown as { getBBox(): { height: number } }).getBBox().height > 0).length,
          );
        expect(drawnBins).toBeGreaterThan(0);
        // One dot per point: the two tied subjects share one, numbered, whose title names both.
        const points = new Set(r.subjects.map((s) => `${s.trustScores.total}|${s.trustConfidence}`));
        expect(points.size).toBeLessThan(r.subjects.length);
        expect(await page.locator('svg.scatter circle.dot').count()).toBe(points.size);
        const shared = await page.locator('svg.scatter circle.dot title').allTextContents();
        const tie = shared.find((t) => t.includes('Alpha tie'));
        expect(tie).toMatch(/^\d+ subjects: score .*Alpha tie.*Beta tie/);
        expect(await page.locator('svg.scatter text.count').allTextContents()).toContain(tie!.split(' ')[0]);
        // The outcome legend reads as meanings, not counts; the badges beside names are explained.
        expect(explain).toContain('correct graded right: scores 100');
        expect(await page.locator('section:has(table.rank) p.legend').textContent()).toContain(
          'its protocol and the registry named in its UAID',
        );

        // Drill-down: one row per signal, with its sequence number (#index inside a pack), outcome, latency, reason and a
        // HashScan link to the transaction by consensus timestamp.
        for (const [i, s] of r.subjects.entries()) {
          expect(await page.locator(`#s${i + 1} details.signals tr.sigrow`).count()).toBe(s.counts.signals);
        }
        const packRows = await page
          .locator(`#s${rank} tr.sigrow`)
          .evaluateAll((rows) =>
            rows.map((e) => [
              ...Array.from((e as unknown as El).querySelectorAll('td')).map((td) => td.textContent ?? ''),
            ]),
          );
        const seq = signals.find((x) => x.message.subject === ONE_RUN)!;
        expect(packRows.map((row) => row[0])).toEqual([
          `${seq.sequenceNumber}#2`,
          `${seq.sequenceNumber}#1`,
          `${seq.sequenceNumber}`,
        ]);
        expect(packRows.map((row) => row[3])).toEqual(['timeout', 'unparseable', 'unreachable']);
        expect(packRows[2]![4]).toContain('connect-refused');
        expect(packRows[2]![5]).toBe('100 ms');
        const links = await page
          .locator('a[href^="https://hashscan.io/testnet/transaction/"]')
          .evaluateAll((as) => as.map((a) => (a as unknown as El).getAttribute('href')));
        expect(links).toHaveLength(r.counts.signals);
        expect(links).toContain(`https://hashscan.io/testnet/transaction/${seq.consensusTimestamp}`);
        expect(await page.locator('a[href="https://hashscan.io/testnet/topic/0.0.1234"]').count()).toBe(1);

        // The hostile subject is text, not markup.
        expect(await page.locator('script').count()).toBe(0);
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.getByText('<script>alert(2)</script>', { exact: false }).count()).toBeGreaterThan(0);

        const scrollWidth = () =>
          page.evaluate(
            () =>
              (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
                .documentElement.scrollWidth,
          );
        expect(await scrollWidth()).toBeLessThanOrEqual(1280);
        await expectReadable(page, 1280, 900);
        if (shots) await page.screenshot({ path: join(shots, 'report-1280.png'), fullPage: true });
        // A phone: nothing wider than the screen, the drill-down open.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.locator('details.signals').evaluateAll((ds) => {
          for (const d of ds) (d as unknown as { open: boolean }).open = true;
        });
        expect(await scrollWidth()).toBeLessThanOrEqual(390);
        // Not even inside a table: on a phone the ranking, components and signals stack instead of scrolling sideways.
        await expectReadable(page, 390, 844);
        if (shots) await page.screenshot({ path: join(shots, 'report-390.png'), fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );

  it('links HashScan on mainnet and on no other network than testnet, previewnet and mainnet', () => {
    expect(report('mainnet').html).toContain('href="https://hashscan.io/mainnet/transaction/');
    for (const network of ['local', 'custom', 'local (embedded emulator)'])
      expect(report(network).html).not.toContain('hashscan.io');
  });
});
