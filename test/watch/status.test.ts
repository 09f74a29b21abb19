/**
 * The watcher's status surfaces: `/metrics` is valid Prometheus text (HELP/TYPE once each, counters `_total`, label
 * values escaped), `/healthz` is JSON, the status line says when the fee cap pauses asking; the daily fee budget
 * holds its limit.
 */
import { describe, expect, it } from 'vitest';
import { DailyBudget } from '../../src/watch/budget.js';
import { Channel } from '../../src/core/channel.js';
import { prometheusText, startStatusServer, statusLine, type WatchStatus } from '../../src/watch/status.js';
import { parseExposition } from './prometheus.js';

const status = (over: Partial<WatchStatus> = {}): WatchStatus => ({
  state: 'running',
  registry: '0.0.1001',
  topic: '0.0.1002',
  registryLagSeconds: 1.5,
  registrySeq: 42,
  agentsKnown: 10,
  queue: 3,
  evaluating: 2,
  counters: {
    cycles: 1,
    evaluations: 7,
    asks: 21,
    signalsJournaled: 21,
    signalsPublished: 18,
    messagesPublished: 3,
    errors: 1,
  },
  feesTodayTinybar: '250000',
  feeCapTinybar: '2000000000',
  ...over,
});

describe('status formats', () => {
  it('renders Prometheus text that a strict reader accepts, with the values of the snapshot', () => {
    const parsed = parseExposition(prometheusText(status()));
    expect(parsed.types.get('hcs25_watch_signals_published_total')).toBe('counter');
    expect(parsed.types.get('hcs25_watch_agents_known')).toBe('gauge');
    const value = (name: string, labels: Record<string, string> = {}) =>
      parsed.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(value('hcs25_watch_signals_published_total')).toBe(18);
    expect(value('hcs25_watch_state', { state: 'running' })).toBe(1);
    expect(value('hcs25_watch_state', { state: 'paused-fee-cap' })).toBe(0);
    expect(value('hcs25_watch_fees_today_tinybar')).toBe(250000);
    expect(value('hcs25_watch_registry_lag_seconds')).toBe(1.5);
    for (const name of parsed.types.keys()) expect(parsed.help.get(name)).toBeTruthy();
    // Before the first registry read the lag is unknown: NaN, still valid.
    expect(
      Number.isNaN(
        parseExposition(prometheusText(status({ registryLagSeconds: null }))).samples.find(
          (s) => s.name === 'hcs25_watch_registry_lag_seconds',
        )!.value,
      ),
    ).toBe(true);
  });

  it('the strict reader itself rejects what Prometheus would', () => {
    expect(() => parseExposition('x 1\n')).toThrow(/without TYPE/);
    expect(() => parseExposition('# TYPE x_total counter\nx_total one\n')).toThrow(/bad sample/);
    expect(() => parseExposition('# TYPE x counter\nx 1\n')).toThrow(/_total/);
    expect(() => parseExposition('# TYPE x gauge\nx 1')).toThrow(/newline/);
  });

  it('serves /healthz as JSON and /metrics as text/plain 0.0.4', async () => {
    const server = await startStatusServer(0, () =>
      status({ state: 'paused-fee-cap', detail: 'daily fee cap reached' }),
    );
    try {
      const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        state: 'paused-fee-cap',
        agentsKnown: 10,
        queue: 3,
        counters: { signalsPublished: 18 },
      });
      const metrics = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      parseExposition(await metrics.text());
      expect((await fetch(`http://127.0.0.1:${server.port}/nope`)).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('the status line names the state, the queue and the fees', () => {
    const line = statusLine(
      status({ state: 'paused-fee-cap', detail: 'daily fee cap reached; asking resumes at 00:00 UTC' }),
    );
    expect(line).toContain('paused-fee-cap (daily fee cap reached');
    expect(line).toContain('queue 3');
    expect(line).toContain('fees today 0.0025/20.0000 ℏ');
  });

  it('the status line says "caught up" when nothing in the registry is unread, and the lag otherwise', () => {
    expect(statusLine(status({ registryLagSeconds: 0 }))).toContain('caught up');
    expect(statusLine(status({ registryLagSeconds: 0 }))).not.toContain('lag');
    expect(statusLine(status({ registryLagSeconds: 12.4 }))).toContain('lag 12s');
    expect(statusLine(status({ registryLagSeconds: null }))).toContain('lag —');
  });
});

describe('DailyBudget', () => {
  it('never commits past the cap, and starts again at 00:00 UTC', () => {
    let now = Date.UTC(2026, 0, 1, 23, 0);
    const budget = new DailyBudget({ capTinybar: 1000n, estimateTinybar: 100n, now: () => now });
    expect(budget.tryReserve(3)).toBe(true);
    expect(budget.tryReserve(3)).toBe(true);
    expect(budget.tryReserve(3)).toBe(true);
    expect(budget.tryReserve(3)).toBe(false); // 12 × 100 > 1000
    budget.packed(9); // nine signals in one pack: one message owed instead of nine
    expect(budget.committedTinybar).toBe(100n);
    budget.confirmed();
    expect(budget.spentTinybar).toBe(100n);
    for (let i = 0; i < 9; i++) {
      expect(budget.tryReserve(1)).toBe(true);
      budget.packed(1);
      budget.confirmed();
    }
    expect(budget.spentTinybar).toBe(1000n);
    expect(budget.tryReserve(1)).toBe(false);
    expect(budget.msUntilNextDay()).toBe(3_600_000);
    now += 3_600_000;
    expect(budget.spentTinybar).toBe(0n);
    expect(budget.tryReserve(1)).toBe(true);
  });

  it('counts what a restarted cycle still owes', () => {
    const budget = new DailyBudget({ capTinybar: 1000n, estimateTinybar: 100n });
    budget.restore(4);
    budget.carry(3, 2);
    expect(budget.committedTinybar).toBe(900n);
    expect(budget.tryReserve(2)).toBe(false);
    expect(budget.tryReserve(1)).toBe(true);
  });
});

it('reserves the worst case of HCS-10 asks, charges each transaction as it goes, and restores what they paid today', () => {
  let now = Date.UTC(2026, 0, 1, 12, 0);
  const budget = new DailyBudget({ capTinybar: 1000n, estimateTinybar: 100n, now: () => now });
  // Two signals and up to 8 ask transactions (10 × 100) fit; one more signal on top does not.
  expect(budget.tryReserve(2, 800n)).toBe(true);
  expect(budget.tryReserve(1)).toBe(false);
  for (let i = 0; i < 5; i++) budget.chargeAsk();
  budget.chargeAsk(50n); // a fee-gated inbound topic's HIP-991 fee on top of the message
  expect(budget.askTinybarToday).toBe(650n);
  budget.release(0, 800n);
  expect(budget.spentTinybar).toBe(650n);
  expect(budget.committedTinybar).toBe(850n); // what was paid plus the two signals still owed
  expect(budget.tryReserve(2)).toBe(false);
  expect(budget.tryReserve(1)).toBe(true);

  const restarted = new DailyBudget({ capTinybar: 1000n, estimateTinybar: 100n, now: () => now });
  restarted.restore(1, 650n);
  restarted.carry(0, 0, 200n);
  expect(restarted.committedTinybar).toBe(950n);
  expect(restarted.tryReserve(1)).toBe(false);
  now += 12 * 3_600_000;
  expect(restarted.askTinybarToday).toBe(0n);
});

describe('Channel', () => {
  it('holds at most its capacity: producers wait for the consumer', async () => {
    const ch = new Channel<number>(2);
    let pushed = 0;
    const producer = (async () => {
      for (let i = 0; i < 5; i++) {
        await ch.push(i);
        pushed++;
      }
      ch.close();
    })();
    await new Promise((r) => setTimeout(r, 20));
    expect(pushed).toBe(2);
    const got: number[] = [];
    for await (const v of ch) got.push(v);
    await producer;
    expect(got).toEqual([0, 1, 2, 3, 4]);
  });
});
