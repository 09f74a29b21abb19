/**
 * Packed v2 signal messages: the signals of one run about several subjects in one HCS message, with the run, the
 * base time, the signal-id table and the sources table written once.
 *
 * Three modes (`hcs25 run --pack dense|subject|none`):
 * - `dense`: as many subjects as fit; the pack's JSON is deflated (zlib, RFC 1950) and the message is those raw
 *   bytes. Its first byte is 0x78 where a JSON message starts with `{` (0x7b), so a reader tells them apart without a
 *   wrapper. Undone by any standard library: Node `zlib.inflateSync`, Python `zlib.decompress`, browsers'
 *   `new DecompressionStream('deflate')`, Java `Inflater`, Go `compress/zlib`.
 * - `subject`: one subject's signals per message, the same pack JSON uncompressed.
 * - `none`: one v2 single signal (`op: "signal"`) per message.
 *
 * Trade-off of `dense`: a block explorer shows a zlib message as unreadable bytes (HashScan shows base64), while
 * `subject` and `none` are readable JSON there. In exchange, dense carries 3-4× as many signals per message. A raw
 * binary body rather than a JSON wrapper such as `{"z":"<base64>"}`: base64 would add a third to every message and
 * buy no readability (the payload inside is unreadable either way), and mirror REST hands out every message as
 * base64 anyway, so consumers handle bytes already. No preset dictionary: browsers' DecompressionStream has none.
 *
 * Every signal stays individually addressable as (sequence number, index): index k is the k-th entry of
 * `subjects[*].sig` in document order, and the dedupe key (payer, run, signal, subject) is the same as for singles.
 */
import { deflateSync } from 'node:zlib';
import { ownBytes } from '../core/bytes.js';
import { MessageTooLargeError } from '../core/errors.js';
import { MessagePacker, withoutKey, type PackFormat, type PackMode } from './packer.js';
import { MAX_MESSAGE_BYTES, PROTOCOL_ID } from './schemas.js';
import { MESSAGE_VERSION_V2, PACK_MAX_SIGNALS, canonicalSignalId, type PackBody, type SignalMessageV2 } from './schemas-v2.js';

export { PACK_MODES, type PackMode } from './packer.js';

/** First byte of a zlib stream with a 32 KiB window (every stream Node, Python and browsers write by default). */
export const ZLIB_FIRST_BYTE = 0x78;

/**
 * zlib's output chunk: a message is at most 1 KiB deflated, so one chunk holds every size the search tries (longer
 * output is still whole, in several chunks), where the default 16 KiB chunk was a fresh ArrayBuffer per deflate.
 */
const DEFLATE_CHUNK_BYTES = 2 * MAX_MESSAGE_BYTES;

/** Largest `dt` of a pack: signals further apart than this from the pack's first one start a new message. */
const DT_MAX_MS = 86_400_000;

export interface PackedMessage {
  mode: PackMode;
  /** `json`: UTF-8 JSON (a pack or a v2 single signal); `zlib`: an RFC 1950 stream of a pack's JSON. */
  encoding: 'json' | 'zlib';
  /** The exact bytes to submit (never more than the packer's limit). */
  bytes: Buffer;
  /** The signals inside, in index order. */
  signals: SignalMessageV2[];
  /** {@link signalKey} of each signal, in index order: what the journal records before the transaction id is used. */
  keys: string[];
}

/** The publisher-side dedupe key (run, catalog signal id, subject); a reader prefixes the payer. */
export function signalKey(message: { run: string; signal: string; subject: string }): string {
  return `${message.run}\u0000${canonicalSignalId(message.signal)}\u0000${message.subject}`;
}

export interface SignalPackerOptions {
  mode: PackMode;
  /** Largest message, bytes (default and maximum: 1024, one HCS chunk). */
  maxBytes?: number;
}

/**
 * Packs signals into messages incrementally (the size search is {@link MessagePacker}'s): a message holds the signals
 * of one run within a day of its first one, and in `subject` mode of one subject.
 */
export class SignalPacker extends MessagePacker<SignalMessageV2, PackedMessage> {
  constructor(options: SignalPackerOptions) {
    const maxBytes = Math.min(options.maxBytes ?? MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
    super(signalPackFormat(options.mode, maxBytes), maxBytes);
  }
}

function signalPackFormat(mode: PackMode, maxBytes: number): PackFormat<SignalMessageV2, PackedMessage> {
  const dense = mode === 'dense';
  return {
    mode,
    encode(signals) {
      const { body, order } = packBody(signals);
      const json = packJson(body);
      const bytes = ownBytes(dense ? deflateSync(json, { level: 9, chunkSize: DEFLATE_CHUNK_BYTES }) : json);
      return { mode, encoding: dense ? 'zlib' : 'json', bytes, signals: order, keys: order.map(signalKey) };
    },
    single(signal) {
      const bytes = ownBytes(Buffer.from(JSON.stringify(signal), 'utf8'));
      if (bytes.length > maxBytes) throw new MessageTooLargeError(bytes.length, maxBytes, 'v2 signal message');
      return { mode, encoding: 'json', bytes, signals: [signal], keys: [signalKey(signal)] };
    },
    belongs(first, count, signal) {
      if (signal.run !== first.run || count >= PACK_MAX_SIGNALS) return false;
      if (Math.abs(Date.parse(signal.fetchedAt) - Date.parse(first.fetchedAt)) > DT_MAX_MS) return false;
      return mode !== 'subject' || signal.subject === first.subject;
    },
    aloneJsonBytes: (signal) => packJson(packBody([signal]).body).length,
    jsonBytes: (signal) => JSON.stringify(signal).length,
  };
}

function packJson(body: PackBody): Buffer {
  return Buffer.from(JSON.stringify(body), 'utf8');
}

/**
 * The pack body of signals of one run. Signals are grouped by subject (and sources) in order of first appearance;
 * `order` is the resulting index order.
 */
export function packBody(signals: readonly SignalMessageV2[]): { body: PackBody; order: SignalMessageV2[] } {
  const first = signals[0];
  if (!first) throw new RangeError('a pack needs at least one signal');
  const at = Date.parse(first.fetchedAt);
  let grader: string | undefined;
  for (const s of signals) {
    if ('grader' in s.data && s.data.grader !== undefined) {
      grader = s.data.grader;
      break;
    }
  }
  const ids: string[] = [];
  const src: string[] = [];
  const groups = new Map<string, { entry: PackBody['subjects'][number]; members: SignalMessageV2[] }>();
  for (const s of signals) {
    if (s.run !== first.run) throw new RangeError('a pack holds the signals of one run');
    const groupKey = `${s.subject}\u0000${(s.sources ?? []).join('\u0000')}`;
    let group = groups.get(groupKey);
    if (!group) {
      const refs = (s.sources ?? []).map((ref) => indexIn(src, ref));
      const entry = { id: s.subject, ...(refs.length > 0 ? { src: refs } : {}), tr: s.data.transport, sig: [] };
      group = { entry, members: [] };
      groups.set(groupKey, group);
    }
    const { transport, ...rest } = s.data;
    // The pack's grader is left out by copying, not `delete`: a deleted key leaves a slow dictionary object.
    const own: Record<string, unknown> = 'grader' in s.data && s.data.grader === grader ? withoutKey(rest, 'grader') : rest;
    const d = transport === group.entry.tr ? own : { ...own, transport };
    group.entry.sig.push({ i: indexIn(ids, s.signal), st: s.status, dt: Date.parse(s.fetchedAt) - at, d });
    group.members.push(s);
  }
  const body: PackBody = {
    p: PROTOCOL_ID,
    op: 'pack',
    v: MESSAGE_VERSION_V2,
    run: first.run,
    at: first.fetchedAt,
    ids,
    ...(grader !== undefined ? { g: grader } : {}),
    ...(src.length > 0 ? { src } : {}),
    subjects: [...groups.values()].map((g) => g.entry),
  };
  return { body, order: [...groups.values()].flatMap((g) => g.members) };
}

function indexIn(table: string[], value: string): number {
  const i = table.indexOf(value);
  return i >= 0 ? i : table.push(value) - 1;
}

/**
 * The signals of a validated pack body as v2 single-signal objects, in index order (not validated here: the reader
 * validates each against the v2 signal schema, or counts an unknown id). Throws RangeError on a dangling table index.
 */
export function expandPack(body: PackBody): Array<Record<string, unknown>> {
  const at = Date.parse(body.at);
  const out: Array<Record<string, unknown>> = [];
  for (const subject of body.subjects) {
    const sources = subject.src?.map((k) => tableEntry(body.src ?? [], k, 'src'));
    for (const s of subject.sig) {
      out.push({
        p: PROTOCOL_ID,
        op: 'signal',
        v: MESSAGE_VERSION_V2,
        signal: tableEntry(body.ids, s.i, 'ids'),
        subject: subject.id,
        status: s.st,
        fetchedAt: new Date(at + s.dt).toISOString(),
        run: body.run,
        ...(sources && sources.length > 0 ? { sources } : {}),
        data: withDefaults(s.d, subject.tr, body.g),
      });
    }
  }
  return out;
}

/** A packed signal's data with what the pack wrote once put back: the subject's transport, the evals' grader. */
function withDefaults(d: Record<string, unknown>, transport: string | undefined, grader: string | undefined): Record<string, unknown> {
  return {
    ...d,
    ...(transport !== undefined && d.transport === undefined ? { transport } : {}),
    ...(grader !== undefined && d.grader === undefined && 'outcome' in d ? { grader } : {}),
  };
}

function tableEntry(table: readonly string[], index: number, name: string): string {
  const value = table[index];
  if (value === undefined) throw new RangeError(`${name}[${index}] does not exist`);
  return value;
}
