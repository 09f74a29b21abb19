import { afterEach, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { RegistryFollower, type RegistryChange, type Subscribe } from '../../src/watch/follow.js';
import { FakeMirror } from '../registry/fake-mirror.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const register = (i: number) => ({
  p: 'hcs-2',
  op: 'register',
  metadata: JSON.stringify({ name: `agent-${i}`, protocol: 'openai', endpoint: `http://a${i}.follow.invalid/v1`, model: 'm' }),
});

let mirror: FakeMirror | undefined;
afterEach(async () => {
  await mirror?.stop();
  mirror = undefined;
});

describe('RegistryFollower', () => {
  it('folds a burst of subscription wake-ups into a few reads, and reports every agent of the burst', async () => {
    mirror = await new FakeMirror().start();
    const registry = mirror.createTopic('hcs-2:0:86400');
    // One agent before the start, so the initial read has loaded what building an agent needs (the standards-sdk).
    mirror.submit(registry, register(-1));
    let wake: ((seq: number) => void) | undefined;
    const subscribe: Subscribe = (_topic, handlers) => {
      wake = handlers.onMessage;
      return { unsubscribe: () => (wake = undefined) };
    };
    const upserts = new Set<string>();
    let ready!: () => void;
    const initial = new Promise<void>((r) => (ready = r));
    const stop = new AbortController();
    const follower = new RegistryFollower({
      registry,
      mirror: new MirrorRestClient({ baseUrl: mirror.url, timeoutMs: 5_000 }),
      network: 'local',
      subscribe,
      minReadGapMs: 2_000,
      onChanges: (changes: RegistryChange[], head) => {
        for (const c of changes) if (c.type === 'upsert') upserts.add(c.agent.subject);
        if (head.initial) ready();
      },
      signal: stop.signal,
    });
    const running = follower.run();
    await initial;
    const reads = () => mirror!.requests.filter((r) => r.startsWith(`/api/v1/topics/${registry}/messages`)).length;
    const before = reads();
    // 40 registrations, one wake-up each, 20 ms apart: as a mirror gRPC subscription delivers a busy registry.
    for (let i = 0; i < 40; i++) {
      const [seq] = mirror.submit(registry, register(i));
      wake?.(seq!);
      await sleep(20);
    }
    for (let t = 0; t < 100 && upserts.size < 41; t++) await sleep(50);
    stop.abort();
    await running;
    expect(upserts.size).toBe(41);
    // A read per wake-up would be one every few ms to tens of ms over the ~0.8 s burst (before: 10 to 40 reads);
    // reads at least 2 s apart: one or two (up to 4 if the machine stretches the burst to 6 s), and one more.
    expect(reads() - before).toBeLessThanOrEqual(5);
  });
});
