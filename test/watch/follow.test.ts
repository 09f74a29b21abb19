import { afterEach, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { RegistryFollower, type RegistryChange, type Subscribe } from '../../src/watch/follow.js';
import { FakeMirror } from '../discover/fake-mirror.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const register = (i: number) => ({
  p: 'hcs-2',
  op: 'register',
  metadata: JSON.stringify({
    name: `agent-${i}`,
    protocol: 'openai',
    endpoint: `http://a${i}.follow.invalid/v1`,
    model: 'm',
  }),
});

/** A follower polling every 50 ms; `next(n)` waits for its n-th report of changes. */
function follow(fake: FakeMirror, registry: string) {
  const batches: RegistryChange[][] = [];
  const stop = new AbortController();
  const follower = new RegistryFollower({
    registry,
    mirror: new MirrorRestClient({ baseUrl: fake.url, timeoutMs: 5_000 }),
    network: 'local',
    pollMs: 50,
    minReadGapMs: 0,
    onChanges: (changes) => void batches.push(changes),
    signal: stop.signal,
  });
  const running = follower.run();
  const next = async (n: number): Promise<RegistryChange[]> => {
    for (let t = 0; t < 200 && batches.length < n; t++) await sleep(25);
    expect(batches.length).toBe(n);
    return batches[n - 1]!;
  };
  return { follower, next, stop, running };
}

/** A follower with a mirror gRPC subscription the test drives: `wake(seq)` is a registry message arriving. */
function subscribed(
  fake: FakeMirror,
  registry: string,
  options: Pick<ConstructorParameters<typeof RegistryFollower>[0], 'minReadGapMs' | 'onChanges'>,
) {
  let wake: ((seq: number) => void) | undefined;
  const subscribe: Subscribe = (_topic, handlers) => {
    wake = handlers.onMessage;
    return { unsubscribe: () => (wake = undefined) };
  };
  const stop = new AbortController();
  const follower = new RegistryFollower({
    registry,
    mirror: new MirrorRestClient({ baseUrl: fake.url, timeoutMs: 5_000 }),
    network: 'local',
    subscribe,
    ...options,
    signal: stop.signal,
  });
  return { follower, stop, wake: (seq: number) => wake?.(seq) };
}

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
    const upserts = new Set<string>();
    let ready!: () => void;
    const initial = new Promise<void>((r) => (ready = r));
    const { follower, stop, wake } = subscribed(mirror, registry, {
      minReadGapMs: 2_000,
      onChanges: (changes: RegistryChange[], head) => {
        for (const c of changes) if (c.type === 'upsert') upserts.add(c.agent.subject);
        if (head.initial) ready();
      },
    });
    const running = follower.run();
    await initial;
    const reads = () => mirror!.requests.filter((r) => r.startsWith(`/api/v1/topics/${registry}/messages`)).length;
    const before = reads();
    // 40 registrations, one wake-up each, 20 ms apart: as a mirror gRPC subscription delivers a busy registry.
    for (let i = 0; i < 40; i++) {
      const [seq] = mirror.submit(registry, register(i));
      wake(seq!);
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

  it('lag: 0 while the subscription reports nothing unread, however long the registry is idle; else since the news', async () => {
    mirror = await new FakeMirror().start();
    const registry = mirror.createTopic('hcs-2:0:86400');
    mirror.submit(registry, register(1));
    let heads = 0;
    const { follower, stop, wake } = subscribed(mirror, registry, { minReadGapMs: 0, onChanges: () => void heads++ });
    expect(follower.lagMs(Date.now())).toBeNull();
    const running = follower.run();
    for (let t = 0; t < 200 && heads === 0; t++) await sleep(10);
    // An hour of an idle registry later: the subscription would have said if anything came.
    expect(follower.lagMs(Date.now() + 3_600_000)).toBe(0);
    const [seq] = mirror.submit(registry, register(2));
    const told = Date.now();
    wake(seq!);
    expect(follower.lagMs(told + 1_500)).toBeGreaterThanOrEqual(1_400);
    for (let t = 0; t < 200 && heads < 2; t++) await sleep(10);
    expect(follower.lagMs(Date.now() + 60_000)).toBe(0);
    stop.abort();
    await running;
  });

  it('lag without a subscription: the time since the last whole read', async () => {
    mirror = await new FakeMirror().start();
    const registry = mirror.createTopic('hcs-2:0:86400');
    const { follower, next, stop, running } = follow(mirror, registry);
    await next(1);
    expect(follower.lagMs(follower.headReadAt + 5_000)).toBe(5_000);
    stop.abort();
    await running;
  });

  it('keeps one agent per entry and per subject: t_id-only updates keep it, new metadata replaces it, a subject goes when no entry holds it', async () => {
    mirror = await new FakeMirror().start();
    const registry = mirror.createTopic('hcs-2:0:86400');
    const [a] = mirror.submit(registry, register(1));
    // Two entries describing one agent (same metadata, same UAID).
    const [b1] = mirror.submit(registry, register(2));
    const [b2] = mirror.submit(registry, register(2));
    const { follower, next, stop, running } = follow(mirror, registry);
    const initial = await next(1);
    const upserts = initial.filter((c) => c.type === 'upsert');
    expect(upserts.map((c) => c.agent.registrySeq)).toEqual([a, b1, b2]);
    const [agentA, agentB] = [upserts[0]!.agent, upserts[1]!.agent];
    expect(upserts[2]).toMatchObject({ agent: { subject: agentB.subject }, previous: agentB });
    expect([...follower.agents.keys()]).toEqual([agentA.subject, agentB.subject]);

    // t_id alone: the metadata (released once built) still describes the agent: the same agent, at the update's seq.
    const [u1] = mirror.submit(registry, { p: 'hcs-2', op: 'update', uid: String(a), t_id: '0.0.77' });
    const kept = await next(2);
    // Not built again (its metadata was released; built from `t_id`, it would be a failed fetch and a delete): the
    // agent the follower's table holds, at the update's sequence.
    expect(kept).toEqual([{ type: 'upsert', agent: agentA, previous: agentA, seq: u1 }]);
    expect(follower.agents.changedSeq(agentA.subject)).toBe(u1);

    // New metadata: a new endpoint is a new UAID; the old subject, held by no other entry, is deleted.
    const [u2] = mirror.submit(registry, { p: 'hcs-2', op: 'update', uid: a, metadata: register(3).metadata });
    const replaced = await next(3);
    expect(replaced.map((c) => c.type)).toEqual(['delete', 'upsert']);
    expect(replaced[0]).toEqual({ type: 'delete', subject: agentA.subject, seq: u2 });
    const agentA3 = (replaced[1] as Extract<RegistryChange, { type: 'upsert' }>).agent;
    expect(agentA3.subject).not.toBe(agentA.subject);
    expect(agentA3.endpoint).toBe('http://a3.follow.invalid/v1');
    // And t_id alone after it keeps the new agent, not the first one.
    mirror.submit(registry, { p: 'hcs-2', op: 'update', uid: a, t_id: '0.0.78' });
    expect((await next(4))[0]).toMatchObject({ type: 'upsert', agent: agentA3 });

    // One of the two entries of B deleted: B stays (no change reported for it); the second: B is deleted.
    mirror.submit(registry, { p: 'hcs-2', op: 'delete', uid: b1 });
    mirror.submit(registry, { p: 'hcs-2', op: 'update', uid: a, t_id: '0.0.79' });
    expect((await next(5)).map((c) => c.type)).toEqual(['upsert']);
    expect(follower.agents.has(agentB.subject)).toBe(true);
    const [d2] = mirror.submit(registry, { p: 'hcs-2', op: 'delete', uid: b2 });
    expect(await next(6)).toEqual([{ type: 'delete', subject: agentB.subject, seq: d2 }]);
    expect([...follower.agents.values()]).toEqual([agentA3]);
    stop.abort();
    await running;
  });

  it('an entry whose metadata is a reference is read again on a t_id-only update (its target may have changed)', async () => {
    mirror = await new FakeMirror().start();
    const registry = mirror.createTopic('hcs-2:0:86400');
    // An hcs://2/ reference means that topic's current entry: a new register there changes the agent.
    const profile = mirror.createTopic('hcs-2:1:86400');
    mirror.submit(profile, register(5));
    const [uid] = mirror.submit(registry, { p: 'hcs-2', op: 'register', metadata: `hcs://2/${profile}` });
    const { next, stop, running } = follow(mirror, registry);
    const [first] = await next(1);
    expect(first).toMatchObject({ type: 'upsert', agent: { endpoint: 'http://a5.follow.invalid/v1' } });
    mirror.submit(profile, register(6));
    mirror.submit(registry, { p: 'hcs-2', op: 'update', uid, t_id: '0.0.77' });
    const changed = await next(2);
    expect(changed.map((c) => c.type)).toEqual(['delete', 'upsert']);
    expect(changed[1]).toMatchObject({ type: 'upsert', agent: { endpoint: 'http://a6.follow.invalid/v1' } });
    stop.abort();
    await running;
  });
});
