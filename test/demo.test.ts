import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDemo, type DemoResult } from '../src/devtools/demo.js';

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
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-demo-test-'));
  const html = join(dir, 'report.html');

  it('discovers, evaluates, publishes, reads back and scores every sample agent', async () => {
    const steps: string[] = [];
    result = await runDemo({ fast: true, ports: 'ephemeral', htmlReport: html, onStep: (l) => steps.push(l) });
    expect(result.run.status).toBe('complete');
    expect(result.run.signals.published).toBe(result.run.signals.expected);
    expect(result.run.signals.expected).toBe(result.agents.length * 3);
    expect(result.rejected).toBe(0);
    expect(result.scores.subjects).toHaveLength(result.agents.length);
    expect(result.agents.map((a) => a.listedAs)).toEqual(
      expect.arrayContaining(['agent record', 'A2A agent card URL', expect.stringMatching(/^HCS-11 profile \(hcs:\/\/1\//), expect.stringMatching(/^HCS-10 account/)]),
    );
    expect(steps.some((s) => s.includes('signal topic'))).toBe(true);
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
  });
});
