/**
 * Packing many v2 signals, or many v2 score records, into one HCS message, and the one size search they and format 3
 * (pack-v3.ts) share. v2 is written only to finish runs journaled in it.
 *
 * Three v2 modes (`hcs25 run --pack dense|subject|none`, `hcs25 scores --publish --pack …`):
 * - `dense`: as many items as fit; the pack's JSON is deflated (zlib, RFC 1950) and the message is those raw
 *   bytes. Its first byte is 0x78 where a JSON message starts with `{` (0x7b), so a reader tells them apart without a
 *   wrapper. Undone by any standard library: Node `zlib.inflateSync`, Python `zlib.decompress`, browsers'
 *   `new DecompressionStream('deflate')`, Java `Inflater`, Go `compress/zlib`.
 * - `subject`: one subject's signals per message (score records: as many as fit), the same pack JSON uncompressed.
 * - `none`: one v2 single signal (`op: "signal"`) or one `op: "score"` record per message.
 *
 * Trade-off of `dense`: a block explorer shows a zlib message as unreadable bytes (HashScan shows base64), while
 * `subject` and `none` are readable JSON there. In exchange, dense carries 3-4× as many signals per message. A raw
 * binary body rather than a JSON wrapper such as `{"z":"<base64>"}`: base64 would add a third to every message and
 * buy no readability (the payload inside is unreadable either way), and mirror REST hands out every message as
 * base64 anyway, so consumers handle bytes already. No preset dictionary: browsers' DecompressionStream has none.
 *
 * Every signal stays individually addressable as (sequence number, index): index k is the k-th entry of
 * `subjects[*].sig` in document order, and the dedupe key (payer, run, signal, subject) is the same as for singles.
 * The formats themselves: schema-v2.ts; reading them back: read-v2.ts.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { MessageTooLargeError } from '../core/errors.js';
import { MAX_MESSAGE_BYTES, PROTOCOL_ID, ZLIB_FIRST_BYTE, type BuiltMessage } from './protocol.js';
import { expandScores } from './read-v2.js';
import {
  MESSAGE_VERSION_V2,
  PACK_MAX_SIGNALS,
  SCORES_MAX_RECORDS,
  SCORES_OP,
  SCORE_MESSAGE_VERSION,
  signalKey,
  type PackBody,
  type ScoreMessageV2,
  type ScoresBody,
  type SignalMessageV2,
} from './schema-v2.js';

/**
 * Every packing mode, in the order `--pack` lists them: format 3 has all four (pack-v3.ts; `json` its default), v2
 * `dense`, `subject` and `none` (a v2 packer given `json` writes a several-subject pack uncompressed).
 */
export const PACK_MODES = ['json', 'subject', 'none', 'dense'] as const;
export type PackMode = (typeof PACK_MODES)[number];
/** The modes v2 runs were journaled with. */
export const PACK_MODES_V2 = ['dense', 'subject', 'none'] as const;

/** Largest `dt` of a pack: signals further apart than this from the pack's first one start a new message. */
const DT_MAX_MS = 86_400_000;

/** A pack's JSON, deflated at the best compression: the fewer messages, the lower the fees. */
function deflate(json: Buffer): Buffer {
  return deflateSync(json, { level: 9 });
}

// --- the size search ---
// Items go into the open message until the next one would push it past the limit, measured on the bytes actually
// sent (deflated in `dense` mode). What an item is, which items may share a message and how a message is encoded is
// the format's business (PackFormat); MessagePacker only decides where one message ends and the next begins.

/** What the packer needs of a message: the exact bytes to submit. */
export interface EncodedMessage {
  bytes: Buffer;
}

export interface PackFormat<T, M extends EncodedMessage> {
  readonly mode: PackMode;
  /** One packed message holding `items`, in order (deflated in `dense` mode). */
  encode(items: T[]): M;
  /** `item` as its format's unpacked message (`none` mode, or an item too big for a pack of its own). Throws if too large. */
  single(item: T): M;
  /** Whether `item` may join the open message whose first item is `first` and which holds `count` items. */
  belongs(first: T, count: number, item: T): boolean;
  /** Size of the uncompressed packed JSON of `item` alone (dense mode skips deflating a lone item that surely fits). */
  aloneJsonBytes(item: T): number;
  /** `item`'s own JSON size, an estimate of what it adds to a message before encoding. */
  jsonBytes(item: T): number;
}

/** Encode for real once the estimated size passes this share of the limit. */
const ESTIMATE_HEADROOM = 0.92;

/**
 * Packs items into messages incrementally. `add` returns the messages that became full; `flush` returns the partial
 * one. Each message is filled as close to the limit as the next item allows and never exceeds it (dense mode measures
 * the compressed bytes). No timers: whoever owns the publishing loop decides when to flush.
 */
export class MessagePacker<T, M extends EncodedMessage> {
  readonly mode: PackMode;
  private readonly maxBytes: number;
  private open: T[] = [];
  /** The open items encoded, when that is known (undefined while only estimated). */
  private encoded: M | undefined;
  /** Sum of the open items' own JSON sizes, and the encoded/raw ratio of the last real encoding. */
  private rawBytes = 0;
  private ratio: number | undefined;

  constructor(
    private readonly format: PackFormat<T, M>,
    maxBytes?: number,
  ) {
    this.mode = format.mode;
    this.maxBytes = Math.min(maxBytes ?? MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
  }

  /** Items added and not yet returned in a message. */
  get pending(): number {
    return this.open.length;
  }

  /** `jsonBytes`: the item's own JSON size when the caller has it, so it is not serialised again. */
  add(item: T, jsonBytes?: number): M[] {
    if (this.mode === 'none') return [this.format.single(item)];
    const out: M[] = [];
    if (this.open.length > 0 && !this.format.belongs(this.open[0]!, this.open.length, item)) out.push(...this.flush());
    const before = this.encoded;
    const raw = jsonBytes ?? this.format.jsonBytes(item);
    this.open.push(item);
    this.rawBytes += raw;
    this.encoded = undefined;
    // Encoding (and deflating) the whole open message on every add costs O(n²) per message: while the size
    // estimated from the last real encoding is well under the limit, the check waits (flush makes it exact).
    if (this.ratio !== undefined && this.rawBytes * this.ratio < this.maxBytes * ESTIMATE_HEADROOM) return out;
    const tried = this.format.encode(this.open);
    this.ratio = tried.bytes.length / this.rawBytes;
    if (tried.bytes.length <= this.maxBytes) {
      this.encoded = tried;
      return out;
    }
    this.open.pop();
    this.rawBytes -= raw;
    this.encoded = before;
    if (!before && this.open.length > 1) {
      // The estimate let the open message grow past the limit unmeasured: what fits goes out, the rest stays open
      // and this item is offered to it again (a flush would send that rest as a message of its own, half empty).
      const sent = this.sendWhatFits();
      out.push(...sent);
      if (sent.length > 0) {
        out.push(...this.add(item, raw));
        return out;
      }
      // All the open items fit (now encoded): with this item they did not (`tried`), so offering it again would only
      // deflate that same message a second time. It goes out as is, below; one deflate less per such message.
    }
    // Too big with this item: what was open goes out, this one starts anew.
    out.push(...this.flush());
    // Deflating costs mostly its set-up, whatever the size: an item whose pack would fit even stored uncompressed
    // starts the next message unencoded (the next add or flush encodes it), saving one deflate per message.
    const alone =
      this.mode === 'dense' && deflateBound(this.format.aloneJsonBytes(item)) <= this.maxBytes
        ? undefined
        : this.format.encode([item]);
    // An item too big for a pack of its own (a very long UAID) still goes out, as its format's single message.
    if (alone && alone.bytes.length > this.maxBytes) out.push(this.format.single(item));
    else {
      this.open = [item];
      this.rawBytes = raw;
      this.encoded = alone;
    }
    return out;
  }

  /** Sends the longest prefixes of the open items that fit until what is left fits; that rest stays open, encoded. */
  private sendWhatFits(): M[] {
    const out: M[] = [];
    for (;;) {
      let n = this.open.length;
      let encoded = this.format.encode(this.open);
      if (encoded.bytes.length <= this.maxBytes) {
        this.encoded = encoded;
        this.rawBytes = this.open.reduce((sum, item) => sum + this.format.jsonBytes(item), 0);
        this.ratio = encoded.bytes.length / this.rawBytes;
        return out;
      }
      while (encoded.bytes.length > this.maxBytes && n > 1) encoded = this.format.encode(this.open.slice(0, --n));
      out.push(encoded.bytes.length > this.maxBytes ? this.format.single(this.open[0]!) : encoded);
      this.open = this.open.slice(n);
    }
  }

  /** The open message (exactly encoded; in the rare case the estimate let it grow past the limit, split to fit). */
  flush(): M[] {
    const out: M[] = [];
    let rest = this.open;
    let encoded = this.encoded;
    this.open = [];
    this.encoded = undefined;
    this.rawBytes = 0;
    while (rest.length > 0) {
      let n = rest.length;
      encoded ??= this.format.encode(rest);
      while (encoded.bytes.length > this.maxBytes && n > 1) encoded = this.format.encode(rest.slice(0, --n));
      out.push(encoded.bytes.length > this.maxBytes ? this.format.single(rest[0]!) : encoded);
      rest = rest.slice(n);
      encoded = undefined;
    }
    return out;
  }
}

/** Most bytes zlib's deflate can make of `n` bytes with any settings (zlib's deflateBound, conservative case, + header and checksum). */
function deflateBound(n: number): number {
  return n + ((n + 7) >> 3) + ((n + 63) >> 6) + 5 + 6;
}

// --- signal packs (op "pack") ---

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
      const bytes = dense ? deflate(json) : json;
      return { mode, encoding: dense ? 'zlib' : 'json', bytes, signals: order, keys: order.map(signalKey) };
    },
    single(signal) {
      const bytes = Buffer.from(JSON.stringify(signal), 'utf8');
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
    const own: Record<string, unknown> =
      'grader' in s.data && s.data.grader === grader ? withoutKey(rest, 'grader') : rest;
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

// --- batches of score records (op "scores") ---

export interface PackedScores {
  mode: PackMode;
  /** `json`: UTF-8 JSON (a batch, or one `op: "score"` record); `zlib`: an RFC 1950 stream of a batch's JSON. */
  encoding: 'json' | 'zlib';
  /** The exact bytes to submit. */
  bytes: Buffer;
  /** The records inside, in index order. */
  records: ScoreMessageV2[];
}

/** The batch body of records (each as `buildScoreMessageV2` made it), with what they all share written once. */
export function scoresBody(records: readonly ScoreMessageV2[]): ScoresBody {
  const first = records[0];
  if (!first) throw new RangeError('a batch needs at least one record');
  const same = <V>(get: (r: ScoreMessageV2) => V): V | undefined => {
    const v = get(first);
    return records.every((r) => get(r) === v) ? v : undefined;
  };
  const version = same((r) => r.trustScoreConfigVersion);
  const updatedAt = same((r) => r.trustScoreUpdatedAt);
  const explained = records.filter((r) => r.explanation);
  const digest =
    explained.length > 0 &&
    explained.every((r) => r.explanation!.configDigest === explained[0]!.explanation!.configDigest)
      ? explained[0]!.explanation!.configDigest
      : undefined;
  return {
    p: PROTOCOL_ID,
    op: SCORES_OP,
    v: SCORE_MESSAGE_VERSION,
    ...(version !== undefined ? { trustScoreConfigVersion: version } : {}),
    ...(updatedAt !== undefined ? { trustScoreUpdatedAt: updatedAt } : {}),
    ...(digest !== undefined ? { configDigest: digest } : {}),
    records: records.map((r) => {
      const { p: _p, op: _op, v: _v, trustScoreConfigVersion, trustScoreUpdatedAt, explanation, ...rest } = r;
      const own: Record<string, unknown> = { ...rest };
      if (version === undefined) own.trustScoreConfigVersion = trustScoreConfigVersion;
      if (updatedAt === undefined) own.trustScoreUpdatedAt = trustScoreUpdatedAt;
      if (explanation) own.explanation = digest === undefined ? explanation : withoutKey(explanation, 'configDigest');
      return own as ScoresBody['records'][number];
    }),
  };
}

/**
 * The records of a message this publisher built (a batch in either encoding, or one `op: "score"` record), unvalidated:
 * for the publisher's own journaled bytes. Topic messages go through the reader (read.ts), which validates.
 */
export function batchRecords(bytes: Buffer): Array<Record<string, unknown>> {
  const value = JSON.parse((bytes[0] === ZLIB_FIRST_BYTE ? inflateSync(bytes) : bytes).toString('utf8')) as Record<
    string,
    unknown
  >;
  return value.op === SCORES_OP ? expandScores(value as ScoresBody) : [value];
}

/** Packs built score records into messages of the given mode (the size search is {@link MessagePacker}'s). */
export class ScorePacker extends MessagePacker<BuiltMessage<ScoreMessageV2>, PackedScores> {
  constructor(options: { mode: PackMode; maxBytes?: number }) {
    const { mode } = options;
    const dense = mode === 'dense';
    const bodyJson = (records: ScoreMessageV2[]) => Buffer.from(JSON.stringify(scoresBody(records)), 'utf8');
    super(
      {
        mode,
        encode(items) {
          const records = items.map((i) => i.message);
          const json = bodyJson(records);
          return { mode, encoding: dense ? 'zlib' : 'json', bytes: dense ? deflate(json) : json, records };
        },
        // buildScoreMessageV2 made sure the record fits one message.
        single: (item) => ({ mode, encoding: 'json', bytes: Buffer.from(item.json, 'utf8'), records: [item.message] }),
        belongs: (_first, count) => count < SCORES_MAX_RECORDS,
        aloneJsonBytes: (item) => bodyJson([item.message]).length,
        jsonBytes: (item) => item.bytes,
      },
      options.maxBytes,
    );
  }
}

/** `o` without `key`, by copying: a deleted key leaves a slow dictionary object. */
export function withoutKey(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (k !== key) out[k] = o[k];
  return out;
}
