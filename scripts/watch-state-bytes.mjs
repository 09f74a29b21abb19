#!/usr/bin/env node
/**
 * Bytes per agent of what `hcs25 watch` keeps per registered agent (run after the build): N bench-like registrations
 * (as scripts/bench-watch.mjs writes them) are folded by an Hcs2Folder, built into agents by the AgentBuilder, and put
 * in the follower's agent table and uid → row map; the live heap after a full GC (--expose-gc) is taken after each
 * structure, and the table's bytes off the heap. Env: WATCH_STATE_AGENTS (default 10,000).
 */
import { spawnSync } from 'node:child_process';
import { DIST } from './lib/emulator.mjs';

if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const N = Number(process.env.WATCH_STATE_AGENTS ?? 10_000);
const { Hcs2Folder } = await import(DIST('registry/hcs2.js'));
const { SkipList, messageRef } = await import(DIST('registry/skips.js'));
const { AgentBuilder } = await import(DIST('registry/agents.js'));
const { openResolveContext } = await import(DIST('registry/resolve.js'));
const { askHost } = await import(DIST('watch/limiter.js'));
const { AgentTable } = await import(DIST('watch/agent-table.js'));

const live = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const body = (i) => JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify({ name: `agent-${i}`, protocol: 'openai', endpoint: `http://a${i}.bench.invalid/v1`, model: 'm' }) });
const topicId = '0.0.1234';
const rows = [];
const step = (name, before) => {
  const after = live();
  rows.push([name, (after - before) / N]);
  return after;
};

// The first UAID loads the standards-sdk (tens of MB of heap): build one agent before the first figure.
const { ctx } = openResolveContext({ mirror: {}, fetch: async () => { throw new Error('no fetch'); } });
const builder = new AgentBuilder(ctx, new SkipList(0), { network: 'testnet' });
await builder.fromMetadata(JSON.parse(body(0)).metadata, { ref: 'warm-up', source: 'warm-up', registrySeq: 0 });
ctx.cache.clear();

let at = live();
const folder = new Hcs2Folder(topicId, true, new SkipList(0));
folder.trackChanges();
for (let i = 1; i <= N; i++) {
  folder.add({ sequenceNumber: i, firstSequenceNumber: i, consensusTimestamp: `1700000000.${String(i).padStart(9, '0')}`, payerAccountId: '0.0.2', message: Buffer.from(body(i)), runningHash: '', chunks: 1 });
}
const uids = folder.takeChanged();
at = step('folder (live entries, alias)', at);

const source = `hcs://2/${topicId}`;
const agents = [];
for (const uid of uids) {
  const e = folder.entryOf(uid);
  agents.push(await builder.fromMetadata(e.metadata ?? `hcs://1/${e.tId}`, { ref: messageRef(topicId, uid), source, registrySeq: uid }));
}
ctx.cache.clear();
at = step('agents (the Agent objects)', at);

// As the follower does once an entry's agent is built: the folder forgets the metadata it was built from.
for (const uid of uids) folder.release(uid);
at = step('folder: metadata released once built', at);

// The follower's table (subject → agent, the watcher's view of the registry: records off the heap, asked-in-cycle a
// flag per row) and its uid → row map; the Agent objects are then let go, as the follower keeps none.
const table = new AgentTable(source);
const built = new Map();
const external = () => process.memoryUsage().arrayBuffers;
const externalBefore = external();
for (const [i, a] of agents.entries()) built.set(uids[i], table.set(a, uids[i]));
agents.length = 0;
at = step('follower uid→row map (the Agent objects let go)', at);
const tableBytes = (external() - externalBefore) / N;

const hosts = new Map();
for (const subject of table.keys()) hosts.set(subject, askHost(table.get(subject)));
at = step('watcher host cache (only while queued)', at);

const total = rows.slice(0, -1).reduce((s, [, b]) => s + b, 0);
console.log(`watch state per agent, ${N} bench-like registrations (live heap after full GC, bytes per agent):`);
for (const [name, b] of rows) console.log(`  ${name.padEnd(48)} ${b.toFixed(0).padStart(6)}`);
console.log(`  ${'kept on the heap (without the host cache)'.padEnd(48)} ${total.toFixed(0).padStart(6)}   (the Agent objects are made when asked for)`);
console.log(`  ${'kept off the heap: the agent table'.padEnd(48)} ${tableBytes.toFixed(0).padStart(6)}   (records, index and per-row columns; ${(table.bytes / N).toFixed(0)} B by its own count)`);
console.log(`  ${"kept off the heap: a cycle's schedule".padEnd(48)} ${'16'.padStart(6)}   (row, generation and slot per agent, typed arrays)`);
// Keep everything reachable until the last figure.
if (folder.messages + table.size + built.size < 0) console.log(hosts);

// The choice grader's prepared-question cache (not per agent: per distinct question and option order asked, in 16,384
// slots): every bundled-bank question in each of its 24 orders, graded once with a reply that needs the options.
const { gradeChoice } = await import(DIST('evals/grade-choice.js'));
const { loadScienceBank, scienceQuestionFromEntry } = await import(DIST('evals/science.js'));
const bank = loadScienceBank();
const orders = [];
const permute = (head, rest) => (rest.length === 0 ? orders.push(head) : rest.forEach((x, i) => permute([...head, x], rest.filter((_, j) => j !== i))));
permute([], [0, 1, 2, 3]);
const questions = bank.flatMap((entry) => orders.map((order) => scienceQuestionFromEntry(entry, order)));
// Each option text's facts are kept by text apart (at most 4,096 texts): graded once first, outside the figure.
for (const entry of bank) gradeChoice(`it is ${entry.options[1]}`, scienceQuestionFromEntry(entry, [3, 2, 1, 0]));
at = live();
for (const q of questions) gradeChoice(`it is ${q.options[1]}`, q);
const perQuestion = (live() - at) / questions.length;
console.log(
  `choice grader question cache: ${perQuestion.toFixed(0)} B per prepared question; the bundled bank (${bank.length} questions × 24 orders) ` +
    `fills at most ${questions.length} of its 16,384 slots, ${((perQuestion * questions.length) / 1e6).toFixed(1)} MB; all slots ${((perQuestion * 16_384) / 1e6).toFixed(1)} MB`,
);
