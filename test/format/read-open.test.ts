/**
 * Open vocabularies, as a property (issue 31): v2 packs and v1/v2 single signals carrying random unknowns — fields,
 * outcome, reason, transport and status values, in-range scores other than 0/100, signal ids, ops, versions —
 * mixed with known signals and malformed ones. Every well-formed signal with a known status and id is read; every
 * unknown is counted; nothing throws; a malformed signal costs only itself (in a pack) or its own message.
 * Deterministic: a fixed seed.
 */
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS } from '../../src/core/agent.js';
import { EVAL_OUTCOMES, SIGNAL_STATUSES } from '../../src/format/protocol.js';
import { buildSignalMessage } from '../../src/format/write-v1.js';
import { packBody } from '../../src/format/pack.js';
import { readMessage, type MessageItem } from '../../src/format/read.js';
import { FAILURE_REASONS } from '../../src/format/reasons.js';
import { SIGNAL_IDS } from '../../src/format/schema-v1.js';
import { SIGNAL_IDS_V2 } from '../../src/format/schema-v2.js';
import { classify } from '../../src/read/reader.js';
import type { TopicEvent } from '../../src/read/types.js';
import { RUN, RUN_KEY } from './fixtures.js';
import { fleetResults, fleetSignals } from './fleet.js';

const AGENTS = 4;
const V2 = fleetSignals(AGENTS);
const V1 = Array.from({ length: AGENTS }, (_, i) => fleetResults(i)).flatMap((results) =>
  results.map((r) => buildSignalMessage(r, { run: RUN, runKey: RUN_KEY }).message),
);

/** Every field name either version or a pack knows: a generated unknown field is none of these. */
const KNOWN_FIELDS = new Set([
  ...Object.keys(V1[0]!),
  ...V1.flatMap((m) => Object.keys(m.data)),
  ...V2.flatMap((m) => [...Object.keys(m), ...Object.keys(m.data)]),
  ...['questionHash', 'answer', 'responseHash', 'httpStatus', 'reason', 'sources', 'grader', 'transport'],
  ...['i', 'st', 'dt', 'd', 'id', 'src', 'tr', 'sig', 'ids', 'at', 'g', 'subjects', 'p', 'op', 'v', 'run'],
]);
const KNOWN_TRANSPORTS = [...PROTOCOLS, 'rest'];
const KNOWN_IDS: readonly string[] = [...Object.values(SIGNAL_IDS), ...Object.values(SIGNAL_IDS_V2)];

const unknownToken = (known: readonly string[]) =>
  fc.stringMatching(/^[a-z0-9][a-z0-9:._-]{0,15}$/).filter((t) => !known.includes(t));
const fieldName = fc
  .oneof({ weight: 9, arbitrary: fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,7}$/) }, fc.constant('__proto__'))
  .filter((k) => !KNOWN_FIELDS.has(k));
const jsonValue = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 6 }),
  fc.constant({ x: [1] }),
);
const fields = fc.uniqueArray(fc.tuple(fieldName, jsonValue), { maxLength: 2, selector: ([k]) => k });
const unexpectedScore = fc
  .oneof(fc.integer({ min: 1, max: 99 }), fc.double({ min: 0, max: 100, noNaN: true }))
  .filter((n) => n !== 0 && n !== 100 && !Object.is(n, -0));
const MALFORMED = ['score-high', 'score-low', 'latency', 'status-shape', 'outcome-shape', 'dangling', 'dt'] as const;
type Malformed = (typeof MALFORMED)[number];

/** What one signal gets: at most one change of each kind (`signal` wins over `malformed`, that over `status`). */
const changeArb = fc.record(
  {
    fields,
    dataFields: fields,
    outcome: unknownToken(EVAL_OUTCOMES),
    reason: unknownToken(FAILURE_REASONS),
    transport: unknownToken(KNOWN_TRANSPORTS),
    score: unexpectedScore,
    status: unknownToken(SIGNAL_STATUSES),
    signal: fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}\.[a-z][a-z0-9_-]{0,8}$/).filter((id) => !KNOWN_IDS.includes(id)),
    malformed: fc.constantFrom(...MALFORMED),
  },
  { requiredKeys: [] },
);
type Change = typeof changeArb extends fc.Arbitrary<infer C> ? C : never;
/** Mostly clean signals, so unknowns stay mixed with known ones. */
const signalChange = fc.oneof({ weight: 2, arbitrary: fc.constant<Change>({}) }, { weight: 3, arbitrary: changeArb });

/** Sets a key as the parsed JSON would have it: an own property, `__proto__` included. */
function put(o: object, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

type Obj = Record<string, unknown>;
interface Expected {
  /** Per signal index: read (with what its data must then hold), unread (counted), or rejected. */
  signals: Array<{
    index: number;
    fate: 'read' | 'unread' | 'rejected';
    signal?: string;
    subject?: string;
    data?: Obj;
  }>;
  /** `kind:name` → count. */
  unknown: Record<string, number>;
  /** The whole message is rejected. */
  rejected?: boolean;
}

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

/**
 * Applies `c` to one signal. `top` holds its signal-level fields (the message itself, or a pack's packed signal),
 * `data` its data; `set` writes status, id and the malformed shapes where this form keeps them.
 */
function applyChange(
  c: Change,
  v: 1 | 2,
  isEval: boolean,
  top: Obj,
  data: Obj,
  set: { status(s: string): void; signal(id: string): void; malformed(m: Malformed): void },
  fieldPrefix: string,
  expect: { unknown: Record<string, number>; index: number },
): { fate: 'read' | 'unread' | 'rejected'; data: Obj; topCounted: boolean } {
  for (const [k, value] of c.fields ?? []) put(top, k, value);
  for (const [k, value] of c.dataFields ?? []) put(data, k, value);
  const values: Obj = {};
  if (c.outcome !== undefined && isEval) values.outcome = c.outcome;
  if (c.reason !== undefined) values.reason = c.reason;
  if (c.transport !== undefined) values.transport = c.transport;
  if (c.score !== undefined) values.score = c.score;
  Object.assign(data, values);
  const inPack = fieldPrefix === 'sig.';
  // In a pack, a packed signal's own fields are counted whatever becomes of it, unless it is malformed.
  const countTop = () => {
    for (const [k] of c.fields ?? []) count(expect.unknown, `field:${fieldPrefix}${k}`);
  };
  if (c.signal !== undefined) {
    set.signal(c.signal);
    count(expect.unknown, `signal:${c.signal}`);
    if (inPack) countTop();
    return { fate: 'unread', data, topCounted: inPack };
  }
  if (c.malformed !== undefined) {
    set.malformed(c.malformed);
    return { fate: 'rejected', data, topCounted: false };
  }
  if (c.status !== undefined) {
    set.status(c.status);
    count(expect.unknown, `value:status=${c.status}`);
    if (inPack) countTop();
    return { fate: 'unread', data, topCounted: inPack };
  }
  for (const [k, value] of Object.entries(values)) {
    if (k === 'reason' && v === 1) continue; // v1 reason codes were never a closed list
    count(expect.unknown, `value:${k}=${value}`);
  }
  countTop();
  for (const [k] of c.dataFields ?? []) count(expect.unknown, `field:data.${k}`);
  return { fate: 'read', data: { ...values, ...Object.fromEntries(c.dataFields ?? []) }, topCounted: true };
}

function malformData(data: Obj, m: Malformed, isEval: boolean): boolean {
  if (m === 'score-low') data.score = -1;
  else if (m === 'latency') data.latencyMs = -3;
  else if (m === 'outcome-shape' && isEval) data.outcome = 'BAD OUTCOME';
  else if (m === 'score-high' || m === 'outcome-shape' || m === 'dangling' || m === 'dt') data.score = 100.5;
  else return false;
  return true;
}

/** A v1 or v2 single signal with `c` applied, and what reading it must give. */
function single(v: 1 | 2, pick: number, c: Change): { body: Buffer; expected: Expected } {
  const original = v === 1 ? V1[pick % V1.length]! : V2[pick % V2.length]!;
  const m = structuredClone(original) as unknown as Obj;
  const data = m.data as Obj;
  const isEval = 'outcome' in data;
  const expected: Expected = { signals: [], unknown: {} };
  const probe = { unknown: {} as Record<string, number>, index: 0 };
  const r = applyChange(
    c,
    v,
    isEval,
    m,
    data,
    {
      status: (s) => {
        m.status = s;
      },
      signal: (id) => {
        m.signal = id;
      },
      malformed: (k) => {
        if (k === 'status-shape') m.status = 'Not-A-Token';
        else malformData(data, k, isEval);
      },
    },
    '',
    probe,
  );
  if (r.fate === 'rejected') return { body: Buffer.from(JSON.stringify(m)), expected: { ...expected, rejected: true } };
  expected.unknown = probe.unknown;
  expected.signals.push({ index: 0, fate: r.fate, signal: original.signal, subject: original.subject, data: r.data });
  return { body: Buffer.from(JSON.stringify(m)), expected };
}

/**
 * A v2 pack of `agents` agents' signals (deflated), or of one agent's probe and math (JSON: more does not fit one
 * message with the unknowns), change k applied to signal k, plus pack and subject fields.
 */
function pack(
  agents: number[],
  changes: Change[],
  packFields: Array<[string, unknown]>,
  subjectFields: Array<[string, unknown]>,
  zlib: boolean,
): { body: Buffer; expected: Expected } {
  const { body, order } = packBody(
    zlib ? agents.flatMap((a) => V2.slice(a * 3, a * 3 + 3)) : V2.slice(agents[0]! * 3, agents[0]! * 3 + 2),
  );
  const raw = structuredClone(body) as unknown as Obj & { ids: string[]; subjects: Array<Obj & { sig: Obj[] }> };
  const expected: Expected = { signals: [], unknown: {} };
  for (const [k, value] of packFields) {
    put(raw, k, value);
    count(expected.unknown, `field:${k}`);
  }
  let index = 0;
  for (const subject of raw.subjects) {
    for (const sig of subject.sig) {
      const k = index++;
      const data = sig.d as Obj;
      const isEval = 'outcome' in data;
      const r = applyChange(
        changes[k] ?? {},
        2,
        isEval,
        sig,
        data,
        {
          status: (s) => {
            sig.st = s;
          },
          signal: (id) => {
            if (!raw.ids.includes(id)) raw.ids.push(id);
            sig.i = raw.ids.indexOf(id);
          },
          malformed: (m) => {
            if (m === 'status-shape') sig.st = 'Not-A-Token';
            else if (m === 'dangling') sig.i = 31;
            else if (m === 'dt') sig.dt = 0.5;
            else malformData(data, m, isEval);
          },
        },
        'sig.',
        { unknown: expected.unknown, index: k },
      );
      expected.signals.push({
        index: k,
        fate: r.fate,
        signal: order[k]!.signal,
        subject: order[k]!.subject,
        data: r.data,
      });
    }
  }
  for (const [k, value] of subjectFields) {
    put(raw.subjects[0]!, k, value);
    count(expected.unknown, `field:subjects.${k}`);
  }
  const json = Buffer.from(JSON.stringify(raw));
  return { body: zlib ? deflateSync(json) : json, expected };
}

/** Another op or version: counted, nothing read. */
function later(kind: 'op' | 'version', token: string, n: number): { body: Buffer; expected: Expected } {
  const m = kind === 'op' ? { p: 'hcs-25', op: token, v: 1 + (n % 2) } : { p: 'hcs-25', op: 'signal', v: 3 + n };
  return {
    body: Buffer.from(JSON.stringify(m)),
    expected: { signals: [], unknown: { [`${kind}:${kind === 'op' ? token : 3 + n}`]: 1 } },
  };
}

const agentSet = fc.uniqueArray(fc.nat(AGENTS - 1), { minLength: 1, maxLength: 2 });
const messageArb = fc.oneof(
  fc.tuple(fc.constantFrom<1 | 2>(1, 2), fc.nat(), signalChange).map(([v, pick, c]) => single(v, pick, c)),
  fc
    .tuple(agentSet, fc.array(signalChange, { minLength: 6, maxLength: 6 }), fields, fields, fc.boolean())
    .map(([agents, changes, packFields, subjectFields, z]) => pack(agents, changes, packFields, subjectFields, z)),
  fc
    .tuple(
      fc.constantFrom<'op' | 'version'>('op', 'version'),
      unknownToken(['signal', 'score', 'reveal', 'pack', 'scores']),
      fc.nat(50),
    )
    .map(([kind, token, n]) => later(kind, token, n)),
);

function check(body: Buffer, expected: Expected, sizes: { fit: number; all: number }): void {
  sizes.all++;
  const read = readMessage(body);
  if (body.length > 1024) {
    expect(read).toMatchObject({ ok: false, reason: 'too-large' });
    return;
  }
  sizes.fit++;
  if (expected.rejected) {
    expect(read).toMatchObject({ ok: false, reason: 'schema' });
    return;
  }
  if (!read.ok) throw new Error(`rejected: ${read.reason} ${read.detail}`);
  const unknown: Record<string, number> = {};
  for (const item of read.items) if (item.kind === 'unknown') count(unknown, `${item.unknown}:${item.name}`);
  expect(unknown).toEqual(expected.unknown);
  const at = (index: number, kind: MessageItem['kind']) =>
    read.items.filter((i) => i.index === index && i.kind === kind);
  for (const s of expected.signals) {
    const signals = at(s.index, 'signal');
    const rejected = at(s.index, 'rejected');
    if (s.fate === 'read') {
      expect(rejected).toEqual([]);
      expect(signals).toHaveLength(1);
      const { message } = signals[0] as Extract<MessageItem, { kind: 'signal' }>;
      expect([message.signal, message.subject]).toEqual([s.signal, s.subject]);
      const held = Object.fromEntries(Object.entries(s.data ?? {}).filter(([k]) => k !== '__proto__'));
      expect(message.data).toMatchObject(held);
    } else {
      expect(signals).toEqual([]);
      expect(rejected).toHaveLength(s.fate === 'rejected' ? 1 : 0);
    }
  }

  // Through the topic reader: one event per read signal, a rejection with its index per malformed packed signal.
  const events: TopicEvent[] = classify(
    { sequenceNumber: 9, consensusTimestamp: '1763719200.000000001', payerAccountId: '0.0.1001', message: body },
    new Set(),
    new Map(),
  );
  const fates = (fate: string) => expected.signals.filter((s) => s.fate === fate).map((s) => s.index);
  expect(events.flatMap((e) => (e.type === 'signal' ? [e.signal.index] : []))).toEqual(fates('read'));
  expect(events.flatMap((e) => (e.type === 'rejected' ? [e.rejected.index] : []))).toEqual(fates('rejected'));
  expect(events.filter((e) => e.type === 'unknown')).toHaveLength(
    Object.values(expected.unknown).reduce((a, b) => a + b, 0),
  );
}

describe('open vocabularies (property)', () => {
  it('reads every known signal, counts every unknown, never throws; a malformed signal costs only itself', () => {
    const sizes = { fit: 0, all: 0 };
    fc.assert(
      fc.property(fc.array(messageArb, { minLength: 1, maxLength: 4 }), (messages) => {
        for (const { body, expected } of messages) check(body, expected, sizes);
      }),
      { seed: 31, numRuns: 1500 },
    );
    // The generator stays within one HCS message almost always, so the property speaks about reading, not size.
    expect(sizes.fit / sizes.all).toBeGreaterThan(0.9);
  });
});
