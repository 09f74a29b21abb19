import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo, type DemoResult } from '../src/devtools/demo.js';
import type { SubjectScore } from '../src/score/scores.js';

/** The served ranking once every subject is indexed and scored (the indexer follows the topic from its start). */
async function servedSubjects(url: string, steps: string[]): Promise<SubjectScore[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const page = (await (await fetch(`${url}/v1/subjects?limit=500`)).json()) as { subjects: SubjectScore[] };
    const fresh = await Promise.all(
      page.subjects.map(async (s) =>
        (await fetch(`${url}/v1/subjects/${encodeURIComponent(s.subject)}/score`)).headers.get('x-score-fresh'),
      ),
    );
    const expected = steps.find((l) => /\d+ agents listed/.test(l))?.match(/(\d+) agents listed/)?.[1];
    if ((page.subjects.length === Number(expected) && fresh.every((f) => f === 'true')) || Date.now() > deadline)
      return page.subjects;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The demo's path, end to end, in fast mode: the same code `npm run demo` runs. */
describe('demo (fast mode)', () => {
  let result: DemoResult;
  let servedUrl: string | undefined;
  let served: SubjectScore[] | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-demo-test-'));
  const html = join(dir, 'report.html');

  it('discovers, evaluates, publishes, reads back and scores every sample agent', async () => {
    const steps: string[] = [];
    // `demo --serve`: once everything is published the topic is served; the API is asked, then the demo is stopped.
    const stop = new AbortController();
    const onReady = (url: string) =>
      void (async () => {
        try {
          servedUrl = url;
          served = await servedSubjects(url, steps);
        } finally {
          stop.abort();
        }
      })();
    result = await runDemo({
      fast: true,
      ports: 'ephemeral',
      htmlReport: html,
      onStep: (l) => steps.push(l),
      serve: { onReady },
      signal: stop.signal,
    });
    expect(result.run.status).toBe('complete');
    expect(result.run.signals.published).toBe(result.run.signals.expected);
    expect(result.run.signals.expected).toBe(result.agents.length * 3);
    expect(result.rejected).toBe(0);
    expect(result.scores.subjects).toHaveLength(result.agents.length);
    expect(result.agents.map((a) => a.listedAs)).toEqual(
      expect.arrayContaining([
        'agent record',
        'A2A agent card URL',
        expect.stringMatching(/^HCS-11 profile \(hcs:\/\/1\//),
        expect.stringMatching(/^HCS-10 account/),
      ]),
    );
    expect(steps.some((s) => s.includes('signal topic'))).toBe(true);
  });

  it('serves the scores it computed (demo --serve): the API ranks every agent', () => {
    expect(served?.map((s) => s.subject).sort()).toEqual(result.scores.subjects.map((s) => s.subject).sort());
    for (const s of served!)
      expect(s.trustScores.total).toBe(result.scores.subjects.find((x) => x.subject === s.subject)!.trustScores.total);
  });

  it('ranks the fleet as its behaviours imply: perfect above verbose above wrong, slow and garbage', () => {
    const score = (name: string) => {
      const s = result.scores.subjects.find((x) => x.label === name);
      expect(s, name).toBeDefined();
      return s!.trustScores.total;
    };
    expect(score('perfect')).toBe(100);
    expect(score('perfect')).toBeGreaterThan(score('verbose'));
    for (const bad of ['wrong', 'slow', 'garbage']) expect(score('verbose'), bad).toBeGreaterThan(score(bad));
    expect(score('hcs10-correct')).toBeGreaterThan(score('hcs10-silent'));
    const rank = result.scores.subjects.map((s) => s.label);
    expect(rank.indexOf('perfect')).toBeLessThan(rank.indexOf('verbose'));
    expect(rank.indexOf('verbose')).toBeLessThan(rank.indexOf('wrong'));
    expect(result.table).toMatch(/perfect/);
  });

  it('writes a self-contained HTML report', () => {
    expect(existsSync(html)).toBe(true);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/<svg/);
    expect(page).toContain('perfect');
    expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href="http/);
  });

  it('leaves nothing running', async () => {
    for (const port of Object.values(result.ports)) expect(await refused(port), `port ${port}`).toBe(true);
    expect(await refused(Number(new URL(servedUrl!).port)), 'serve').toBe(true);
  });
});
