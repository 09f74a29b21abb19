import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookDelivery } from '../../src/index.js';
import type { ReadSignal } from '../../src/read/types.js';
import { crossing, planDeliveries } from '../../src/serve/hooks/match.js';
import { signDelivery } from '../../src/serve/hooks/signature.js';
import type { ServeStore, StoredHook, SubjectChange } from '../../src/serve/store/index.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';
import { indexAndScore, storeEngines } from './helpers.js';

const TOPIC = '0.0.4242';
const NOW = new Date(T0 + 200 * HOUR);

/** Signals for `subject` over `count` runs from run `from`: probes reachable or not, evals correct or wrong. */
function runs(subject: string, from: number, count: number, good: boolean, seq: { next: number }): ReadSignal[] {
  const out: ReadSignal[] = [];
  for (let r = from; r < from + count; r++) {
    const at = T0 + r * HOUR;
    out.push(probe(subject, { seq: seq.next++, at, run: r, reachable: good }));
    out.push(evalSignal(subject, 'math', good ? 'correct' : 'wrong', { seq: seq.next++, at: at + 100, run: r }));
  }
  return out;
}

const index = (store: ServeStore, signals: ReadSignal[]) => indexAndScore(store, TOPIC, signals, NOW);

describe('planDeliveries and the signature', () => {
  const hook = (over: Partial<StoredHook>): StoredHook => ({
    id: 'hk_1',
    url: 'https://hooks.example.com/',
    events: ['score-crossed', 'availability-changed'],
    thresholds: [50, 80],
    subjects: null,
    topic: null,
    createdAt: new Date(0).toISOString(),
    ...over,
  });
  const change = (over: Partial<SubjectChange>): SubjectChange => ({
    topic: TOPIC,
    subject: 's',
    revision: 7,
    previousTotal: 60,
    total: 60,
    previousReachable: true,
    reachable: true,
    ...over,
  });
  const plan = (changes: SubjectChange[], hooks: StoredHook[]) =>
    planDeliveries(changes, hooks, new Date(0)).map((d) => JSON.parse(d.body) as Record<string, unknown>);

  it('fires once per threshold crossed, either way, and per availability flip; unknown states only start', () => {
    expect(crossing(49.9, 50, 50)).toBe('up');
    expect(crossing(50, 49.9, 50)).toBe('down');
    expect(crossing(50, 80, 50)).toBeUndefined();
    expect(plan([change({ previousTotal: 40, total: 90 })], [hook({})]).map((p) => [p.threshold, p.direction])).toEqual(
      [
        [50, 'up'],
        [80, 'up'],
      ],
    );
    expect(plan([change({ previousTotal: 90, total: 70, reachable: false })], [hook({})]).map((p) => p.event)).toEqual([
      'score-crossed',
      'availability-changed',
    ]);
    expect(
      plan([change({ previousTotal: null, total: 90, previousReachable: null, reachable: false })], [hook({})]),
    ).toEqual([]);
    expect(plan([change({ previousTotal: 40, total: 90 })], [hook({ subjects: ['other'] })])).toEqual([]);
    expect(plan([change({ previousTotal: 40, total: 90 })], [hook({ topic: '0.0.1' })])).toEqual([]);
    expect(plan([change({ previousTotal: 40, total: 90 })], [hook({ events: ['availability-changed'] })])).toEqual([]);
  });

  it('verifies a signature over the timestamp and body, and refuses an old one', () => {
    const body = '{"event":"score-crossed"}';
    const signature = signDelivery('whsec_k', 1_000, body);
    expect(verifyWebhookDelivery('whsec_k', { signature, timestamp: '1000' }, body, 1_100)).toBe(true);
    expect(verifyWebhookDelivery('whsec_k', { signature, timestamp: '1000' }, body, 1_000 + 301)).toBe(false);
    expect(verifyWebhookDelivery('whsec_k', { signature, timestamp: '1001' }, body, 1_001)).toBe(false);
    expect(verifyWebhookDelivery('whsec_other', { signature, timestamp: '1000' }, body, 1_000)).toBe(false);
    expect(verifyWebhookDelivery('whsec_k', { signature, timestamp: '1000' }, `${body} `, 1_000)).toBe(false);
  });
});

const { engines } = storeEngines('hooks');

describe.each(engines)('the webhook store on $name', ({ open }) => {
  let store: ServeStore;
  const seq = { next: 1 };
  const S = uaid('gamma.example.com');
  const at = new Date('2026-11-28T00:00:00.000Z');
  const plan = (changes: readonly SubjectChange[], hooks: readonly StoredHook[]) => planDeliveries(changes, hooks, at);

  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(async () => {
    await store?.close();
  });

  it('compares rescored subjects with what it saw, queues what hooks ask for, and logs attempts', async () => {
    await index(store, runs(S, 0, 10, true, seq));
    // First sight: nothing to compare with, nothing queued.
    expect(await store.queueHookDeliveries(plan, { now: at })).toEqual({ changes: 1, queued: 0, more: false });
    const hook = await store.createHook({
      id: 'hk_store',
      url: 'https://hooks.example.com/',
      secret: 'whsec_s',
      events: ['availability-changed'],
      thresholds: null,
      subjects: [S],
      topic: TOPIC,
      createdAt: at,
    });
    expect(await store.hooks()).toEqual({ items: [hook], next: null });
    expect(await store.hookCount()).toBe(1);
    expect(await store.queueHookDeliveries(plan, { now: at })).toEqual({ changes: 0, queued: 0, more: false });

    await index(store, runs(S, 10, 2, false, seq));
    expect(await store.queueHookDeliveries(plan, { now: at })).toEqual({ changes: 1, queued: 1, more: false });
    expect(await store.dueHookDeliveries(new Date(at.getTime() - 1), 10)).toEqual([]);
    const [due] = await store.dueHookDeliveries(at, 10);
    expect(due).toMatchObject({ hook: 'hk_store', url: hook.url, secret: 'whsec_s', attempts: 0 });
    expect(JSON.parse(due!.body)).toMatchObject({ event: 'availability-changed', reachable: false, previous: true });

    const retryAt = new Date(at.getTime() + 60_000);
    await store.recordHookAttempt(due!.n, {
      attempt: 1,
      at,
      status: 502,
      error: 'HTTP 502',
      ok: false,
      nextAt: retryAt,
    });
    expect(await store.nextHookDelivery()).toEqual(retryAt);
    expect(await store.dueHookDeliveries(at, 10)).toEqual([]);
    expect((await store.dueHookDeliveries(retryAt, 10))[0]).toMatchObject({ n: due!.n, attempts: 1 });
    await store.recordHookAttempt(due!.n, {
      attempt: 2,
      at: retryAt,
      status: 200,
      error: null,
      ok: true,
      nextAt: null,
    });
    expect(await store.nextHookDelivery()).toBeNull();
    const log = await store.hookAttempts('hk_store');
    expect(log.items.map((a) => [a.attempt, a.status, a.ok, a.state, a.at])).toEqual([
      [2, 200, true, 'delivered', retryAt.toISOString()],
      [1, 502, false, 'delivered', at.toISOString()],
    ]);
    expect((await store.hook('hk_store'))!.deliveries).toEqual({ pending: 0, delivered: 1, failed: 0 });

    // Old finished deliveries go; deleting the hook takes the rest with it.
    expect(await store.pruneHookDeliveries(new Date(at.getTime() + 1))).toBe(1);
    expect((await store.hookAttempts('hk_store')).items).toEqual([]);
    expect(await store.deleteHook('hk_store')).toBe(true);
    expect(await store.deleteHook('hk_store')).toBe(false);
    expect(await store.hook('hk_store')).toBeNull();
  });

  it('takes whole revisions at a time, so no rescored subject is passed over', async () => {
    const subjects = Array.from({ length: 5 }, (_, i) => uaid(`many${i}.example.com`));
    for (const s of subjects) await index(store, runs(s, 0, 2, true, seq));
    const steps: number[] = [];
    for (;;) {
      const step = await store.queueHookDeliveries(plan, { now: at, limit: 2 });
      steps.push(step.changes);
      if (!step.more) break;
    }
    expect(steps.reduce((a, b) => a + b, 0)).toBe(subjects.length);
    expect(Math.max(...steps)).toBeLessThanOrEqual(2);
  });
});
