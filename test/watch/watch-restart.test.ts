/**
 * `watchRegistry` stopped and started again on the emulator (2 s mirror lag): what a stop or SIGKILL leaves at each
 * awkward moment (a run's journal not yet named in the state, a run closed while an agent was half asked, a cursor
 * saved past an agent) is picked up by the next start, nothing lost or asked twice; an agent updated in the registry,
 * while the watcher runs or while it is down, is asked again.
 */
import { describe, expect, it } from 'vitest';
import { createTopic, submitMessage } from '../../src/hedera/tx.js';
import { listRuns, readJournal, journalPath, signalReceipt } from '../../src/publish/journal.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { loadWatchState, saveWatchState, watchStatePath } from '../../src/watch/state.js';
import { readFile, writeFile } from 'node:fs/promises';
import { until } from './helpers.js';
import { topicSignals } from '../publish/helpers.js';
import { useWatchEmulator } from './emulator.js';

const env = useWatchEmulator();

describe('hcs25 watch (action) stopped and restarted, 2 s mirror lag', () => {
  it("a stop between a new run's journal and the save naming it: the next start removes that journal, nothing else", async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    await env.register(registry, env.fleet.agents[0]!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/opening`;
    const first = env.startWatch(stateDir, registry, topic);
    await until('the first agent on the topic', async () =>
      (await topicSignals(env.h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    first.stop.abort();
    await first.done;
    const [run] = await listRuns(stateDir);
    // The state as such a stop leaves it: a run named as opening, its journal holding its start record only.
    const orphan = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const startLine = (await readFile(journalPath(stateDir, run!), 'utf8')).split('\n')[0]!.replace(run!, orphan);
    await writeFile(journalPath(stateDir, orphan), `${startLine}\n`);
    const statePath = watchStatePath(stateDir, registry, topic);
    await saveWatchState(statePath, { ...(await loadWatchState(statePath, registry, topic)), opening: orphan });
    expect(await listRuns(stateDir)).toContain(orphan);

    const second = env.startWatch(stateDir, registry, topic);
    await until('the unused journal removed', () =>
      second.notes.some((n) => n.includes(`run ${orphan} was created but never used`)) ? true : undefined,
    );
    second.stop.abort();
    await second.done;
    expect(await listRuns(stateDir)).not.toContain(orphan);
    expect(await listRuns(stateDir)).toContain(run);
    expect((await loadWatchState(statePath, registry, topic)).opening).toBeUndefined();
    expect((await topicSignals(env.h.mirror, topic)).duplicates).toBe(0);
  }, 120_000);

  it('a run closed while an agent was half asked, then a stop: the restart asks what it lacks in that run and reveals it', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    await env.register(registry, env.fleet.agents[0]!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/half`;
    const first = env.startWatch(stateDir, registry, topic);
    await until('the first agent on the topic', async () =>
      (await topicSignals(env.h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    first.stop.abort();
    await first.done;
    const [run] = await listRuns(stateDir);
    // The journal a SIGKILL leaves when a run closes (full) while its last agent is asked: its probe journaled, the
    // rest not yet. Forged from the real run: its start record and probe result under a new run id.
    const half = '01JZZZZZZZZZZZZZZZZZZZZZZY';
    const lines = (await readFile(journalPath(stateDir, run!), 'utf8')).split('\n');
    const probe = lines.find((l) => l.includes('"t":"result"') && l.includes('"kind":"availability"'))!;
    await writeFile(
      journalPath(stateDir, half),
      `${lines[0]!.replaceAll(run!, half)}\n${probe.replaceAll(run!, half)}\n`,
    );
    const statePath = watchStatePath(stateDir, registry, topic);
    await saveWatchState(statePath, { ...(await loadWatchState(statePath, registry, topic)), unrevealed: [half] });

    const second = env.startWatch(stateDir, registry, topic);
    const { state } = await until('the half-asked run revealed', async () => {
      const r = await readJournal(journalPath(stateDir, half));
      return r.state.reveals.get(topic)?.receipt ? r : undefined;
    });
    second.stop.abort();
    await second.done;
    const subject = (JSON.parse(probe) as { result: { agent: { subject: string } } }).result.agent.subject;
    const read = await until("the run's signals on the topic", async () => {
      const r = await topicSignals(env.h.mirror, topic);
      return r.signals.filter((s) => s.message.run === half).length >= 3 ? r : undefined;
    });
    // The missing evals were asked in the run that lacked them, once; the journaled probe was published, not asked again.
    expect(read.signals.filter((s) => s.message.run === half).map((s) => s.message.subject)).toEqual([
      subject,
      subject,
      subject,
    ]);
    expect(second.notes.some((n) => n.includes(`finishing run ${half}: 1 agent to complete`))).toBe(true);
    expect(read.duplicates).toBe(0);
    expect([...state.signals.values()].filter((s) => s.message).every((s) => signalReceipt(state, s))).toBe(true);
  }, 120_000);

  it('saves a cursor past an agent only once its answers are on disk: a SIGKILL then leaves none behind the cursor unasked', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    await env.register(registry, env.fleet.agents[0]!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/cursor`;
    // The publisher flushes the journal when it sends a pack: one agent's signals never fill one, and with the flush
    // timer at an hour its answers stay in memory unless saving the cursor flushes them.
    const w = env.startWatch(stateDir, registry, topic, { flushMs: 3_600_000 });
    const statePath = watchStatePath(stateDir, registry, topic);
    const saved = await until('a cursor past the agent', async () => {
      const st = await loadWatchState(statePath, registry, topic);
      return st.cursor && st.cursor.seq >= 1 && st.cycle?.run ? st : undefined;
    });
    // What a SIGKILL now would leave on disk: the agent the cursor passed has its answers in the journal.
    const { state } = await readJournal(journalPath(stateDir, saved.cycle!.run!));
    expect(state.results).toBe(3);
    w.stop.abort();
    expect((await w.done).status.state).toBe('stopped');
  }, 120_000);

  it('an agent updated after it was asked: the run is closed early and a new run of the same cycle asks it again, once', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    const record = env.fleet.agents[0]!;
    const { seq } = await env.register(registry, record);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/update`;
    const w = env.startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    const before = await until('the agent on the topic', async () => {
      const r = await topicSignals(env.h.mirror, topic);
      return r.signals.length >= 3 ? r : undefined;
    });
    // Same agent, new registration: an HCS-2 update of its entry, declaring the UAID it had (so the subject is kept).
    const uaid = before.signals[0]!.message.subject;
    const update = {
      p: 'hcs-2',
      op: 'update',
      uid: String(seq),
      metadata: JSON.stringify({ ...record, name: `${record.name} (v2)`, uaid }),
    };
    await submitMessage(env.h.client, registry, JSON.stringify(update), undefined);
    const read = await until('the agent asked again', async () => {
      const r = await topicSignals(env.h.mirror, topic);
      return r.signals.length >= 6 ? r : undefined;
    });
    w.stop.abort();
    const result = await w.done;
    expect(result.status.counters.cycles).toBe(1);
    const perRun = new Map<string, number>();
    for (const s of read.signals) perRun.set(s.message.run, (perRun.get(s.message.run) ?? 0) + 1);
    expect([...perRun.values()]).toEqual([3, 3]);
    expect(new Set(read.signals.map((s) => s.message.subject)).size).toBe(1);
    expect(read.duplicates).toBe(0);
    const first = await readJournal(journalPath(stateDir, result.runs[0]!));
    expect(first.state.reveals.get(topic)?.receipt).toBeDefined();
    expect((await loadWatchState(watchStatePath(stateDir, registry, topic), registry, topic)).reask ?? {}).toEqual({});
  }, 120_000);

  it('an agent updated while the watcher was down is asked again after the restart; an entry touched but unchanged is not', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    const [record, other] = [env.fleet.agents[0]!, env.fleet.agents[1]!];
    const { seq } = await env.register(registry, record);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/update-down`;
    const first = env.startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    const signalsOn = (n: number) =>
      until(`${n} signals on the topic`, async () => {
        const r = await topicSignals(env.h.mirror, topic);
        return r.signals.length >= n ? r : undefined;
      });
    const uaid = (await signalsOn(3)).signals[0]!.message.subject;
    const { seq: otherSeq } = await env.register(registry, other);
    const otherUaid = (await signalsOn(6)).signals.find((s) => s.message.subject !== uaid)!.message.subject;
    first.stop.abort();
    const [run] = (await first.done).runs;
    // While it is down: one agent really changes; the other's entry is rewritten as it was (asked alike: not again).
    const update = (uid: number, metadata: object) =>
      submitMessage(
        env.h.client,
        registry,
        JSON.stringify({ p: 'hcs-2', op: 'update', uid: String(uid), metadata: JSON.stringify(metadata) }),
        undefined,
      );
    await update(seq, { ...record, name: `${record.name} (v2)`, uaid });
    await update(otherSeq, { ...other, uaid: otherUaid });
    // Restarted once the mirror node shows both updates: they reach the watcher as changes made while it was down.
    await until('the updates on the mirror node', async () => {
      let n = 0;
      for await (const _ of env.h.mirror.topicMessages(registry)) n++;
      return n >= 4 ? true : undefined;
    });
    const second = env.startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    await signalsOn(9);
    await new Promise((r) => setTimeout(r, 3_000)); // time for a wrong second ask of the unchanged agent to show
    second.stop.abort();
    await second.done;
    const after = await topicSignals(env.h.mirror, topic);
    expect(after.signals).toHaveLength(9);
    expect(after.duplicates).toBe(0);
    const again = after.signals.filter((s) => s.message.run !== run);
    expect(again).toHaveLength(3);
    expect(new Set(again.map((s) => s.message.subject))).toEqual(new Set([uaid]));
    expect(after.signals.filter((s) => s.message.subject === otherUaid)).toHaveLength(3);
  }, 120_000);
});
