/**
 * The format-3 parser: the items of a `"fmt":"hcs25-tool/3"` message (read.ts has decoded it). Each signal of an
 * `op: "signals"` message is expanded to the internal object a v2 single signal is (with `v: 3`), so scoring,
 * verification and serving read every format alike. Each signal stands alone: a malformed one is a `rejected` item
 * with its index and the rest of the message reads; only a malformed envelope rejects the whole message. Values and
 * fields this version does not know are counted (`unknown` items), never fatal; a signal whose status is unknown is
 * counted and not scored. `op: "zlib"` inflates once and reads the message inside; score ops are read-score-v3.ts.
 */
import { PROTOCOL_ID } from './protocol.js';
import {
  Malformed,
  inflateBounded,
  parseJson,
  signalItems,
  unknownFields,
  unknownItem,
  validate,
  type MessageItem,
  type OpenSignal,
  type RejectedItem,
  type SignalVocabulary,
} from './read-common.js';
import { VOCABULARY_V2 } from './read-v2.js';
import { readScoreOpsV3 } from './read-score-v3.js';
import { KNOWN_SIGNAL_IDS_V2, SIGNAL_IDS_V2 } from './schema-v2.js';
import {
  DEFAULT_GRADER_V3,
  FORMAT_ID_PREFIX,
  FORMAT_ID_V3,
  FORMAT_VERSION_V3,
  REVEAL_OP,
  SIGNALS_OP,
  ZLIB_MAX_INFLATED_BYTES,
  ZLIB_OP,
  revealMessageV3Schema,
  signalEntryV3Schema,
  signalsEnvelopeV3Schema,
  subjectSources,
  subjectTransport,
  zlibMessageV3Schema,
  type SignalEntryV3,
} from './schema-v3.js';

const TOP_FIELDS: ReadonlySet<string> = new Set(['fmt', 'op', 'run', 'at', 'src', 'ids', 'subjects']);
const SUBJECT_FIELDS: ReadonlySet<string> = new Set(['id', 'src', 'tr', 'sig']);
const SIGNAL_FIELDS: ReadonlySet<string> = new Set(Object.keys(signalEntryV3Schema.shape));
/** A packed signal's own keys are its vocabulary (its data is expanded from them, so no `data.` names to count). */
const VOCABULARY_V3: SignalVocabulary = { ...VOCABULARY_V2, fields: SIGNAL_FIELDS, data: {} };
/** A UAID's `proto` stands in for `tr`: it must be a transport token as `tr` is. */
const TRANSPORT = /^[a-z0-9][a-z0-9-]{0,31}$/;
const EVAL_IDS: ReadonlySet<string> = new Set([SIGNAL_IDS_V2.math, SIGNAL_IDS_V2.science]);

/** The items of a decoded format-3 message (its `fmt` is FORMAT_ID_V3). */
export function readV3(value: Record<string, unknown>): MessageItem[] {
  return readOp(value, false);
}

/** The version a `fmt` names: 3, another number or name after `hcs25-tool/`, or undefined when it is none of ours. */
export function formatVersion(fmt: unknown): string | undefined {
  return typeof fmt === 'string' && fmt.startsWith(FORMAT_ID_PREFIX) ? fmt.slice(FORMAT_ID_PREFIX.length) : undefined;
}

function readOp(value: Record<string, unknown>, inflated: boolean): MessageItem[] {
  const { op } = value;
  if (op === SIGNALS_OP) return readSignals(value);
  if (op === 'score' || op === 'scores') return readScoreOpsV3(value);
  if (op === ZLIB_OP) {
    // One level only: a zlib inside a zlib is how a decompression bomb multiplies.
    if (inflated) throw new Malformed('schema', 'a zlib message holds op "signals" or "scores", not another zlib');
    return readZlib(value);
  }
  if (op === REVEAL_OP) {
    const message = validate(revealMessageV3Schema, value, '') as Record<string, unknown>;
    return [{ kind: 'reveal', index: 0, v: FORMAT_VERSION_V3, message, validated: true }];
  }
  return [unknownItem(0, 'op', op)];
}

function readZlib(value: Record<string, unknown>): MessageItem[] {
  const { zlib } = validate(zlibMessageV3Schema, value, '');
  const inner = parseJson(inflateBounded(Buffer.from(zlib, 'base64'), ZLIB_MAX_INFLATED_BYTES, 'zlib'));
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
    throw new Malformed('schema', 'zlib: the inflated body is not a JSON object');
  }
  const { fmt } = inner as { fmt?: unknown };
  if (fmt !== FORMAT_ID_V3) {
    const version = formatVersion(fmt);
    if (version !== undefined) return [unknownItem(0, 'version', version)];
    throw new Malformed('schema', 'zlib: the inflated body is not a format-3 message');
  }
  return readOp(inner as Record<string, unknown>, true);
}

function readSignals(value: Record<string, unknown>): MessageItem[] {
  const body = validate(signalsEnvelopeV3Schema, value, '');
  const at = Date.parse(body.at);
  const items: MessageItem[] = unknownFields(value, TOP_FIELDS, 0);
  let index = 0;
  body.subjects.forEach((subject, s) => {
    let sources: string[];
    try {
      sources = subjectSources(body, subject);
    } catch (err) {
      throw new Malformed('schema', `subjects.${s}.src: ${(err as Error).message}`);
    }
    const tr = subjectTransport(subject);
    if (tr === undefined || !TRANSPORT.test(tr)) {
      throw new Malformed('schema', `subjects.${s}.tr: required when the UAID names no proto`);
    }
    unknownFields(subject, SUBJECT_FIELDS, index, 'subjects.', items);
    const context = { run: body.run, at, ids: body.ids, subject: subject.id, tr, sources };
    for (const raw of subject.sig) items.push(...readSignal(raw, index++, context));
  });
  return items;
}

interface SignalContextV3 {
  run: string;
  at: number;
  ids: readonly string[];
  subject: string;
  tr: string;
  sources: string[];
}

/** One signal of a pack: a signal item (with counted unknowns), an unknown item, or a rejected item. */
function readSignal(raw: unknown, index: number, c: SignalContextV3): MessageItem[] {
  const where = `signal ${index}: `;
  let entry: SignalEntryV3;
  try {
    entry = validate(signalEntryV3Schema, raw, where);
  } catch (err) {
    return [rejected(index, err)];
  }
  const id = c.ids[entry.i];
  if (id === undefined) return [rejectedItem(index, `${where}i: ids[${entry.i}] does not exist`)];
  if (!KNOWN_SIGNAL_IDS_V2.has(id)) return [unknownItem(index, 'signal', id)];
  const isEval = EVAL_IDS.has(id);
  if (isEval && entry.outcome === undefined && entry.score !== 100 && entry.score !== 0) {
    return [rejectedItem(index, `${where}outcome: required unless the score is 100 (correct) or 0 (wrong)`)];
  }
  const message = {
    p: PROTOCOL_ID,
    op: 'signal',
    v: FORMAT_VERSION_V3,
    // The v2 signal schema's key order, so a signal's JSON is the same whichever format carried it (signalDigest).
    subject: c.subject,
    status: entry.st ?? 'ok',
    fetchedAt: new Date(c.at + entry.dt).toISOString(),
    run: c.run,
    ...(c.sources.length > 0 ? { sources: c.sources } : {}),
    signal: id,
    data: isEval ? evalData(entry, c.tr) : probeData(entry, c.tr),
  };
  // Open values (a status, outcome, reason, transport or score this version does not know) are counted there.
  return signalItems(index, message as unknown as OpenSignal, VOCABULARY_V3, raw as object);
}

function evalData(e: SignalEntryV3, transport: string): Record<string, unknown> {
  return {
    outcome: e.outcome ?? (e.score === 100 ? 'correct' : 'wrong'),
    score: e.score,
    ...(e.q !== undefined ? { questionHash: `hs256:${e.q}` } : {}),
    ...(e.a !== undefined ? { answer: e.a } : {}),
    ...(e.r !== undefined ? { responseHash: `hs256:${e.r}` } : {}),
    // Absent `r` with a response (`a`) means the reply was exactly the answer.
    compliant: e.r === undefined && e.a !== undefined,
    latencyMs: e.ms ?? 0,
    grader: DEFAULT_GRADER_V3,
    transport,
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
  };
}

function probeData(e: SignalEntryV3, transport: string): Record<string, unknown> {
  return {
    reachable: e.score > 0,
    score: e.score,
    latencyMs: e.ms ?? 0,
    transport,
    ...(e.http !== undefined ? { httpStatus: e.http } : {}),
    ...(e.reason !== undefined ? { reason: e.reason } : {}),
  };
}

function rejected(index: number, err: unknown): RejectedItem {
  if (err instanceof Malformed) return { kind: 'rejected', index, reason: err.reason, detail: err.message };
  return rejectedItem(index, err instanceof Error ? err.message : 'malformed signal');
}

function rejectedItem(index: number, detail: string): RejectedItem {
  return { kind: 'rejected', index, reason: 'schema', detail };
}
