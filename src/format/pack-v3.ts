/**
 * Packing format-3 signals into messages (the size search is pack.ts's MessagePacker). Four modes
 * (`hcs25 run --pack json|subject|none|dense`):
 * - `json` (default): one `op: "signals"` message holding as many subjects as fit, readable in any explorer;
 * - `subject`: one subject's signals per message;
 * - `none`: one signal per message (still `op: "signals"`);
 * - `dense`: the `json` message deflated (zlib, RFC 1950) and wrapped, base64, in `op: "zlib"` — never bare bytes,
 *   so a message always says what it is; as many subjects as fit.
 *
 * The packer takes a subject's signals together (a group) and never splits a group between messages unless the group
 * alone does not fit one: a reader finds a subject's signals of a run in one message. The unit it merges is a
 * one-signal message (write-v3.ts `buildSignalV3`), the form the journal keeps each result in.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { MessageTooLargeError } from '../core/errors.js';
import { MAX_MESSAGE_BYTES } from './protocol.js';
import { MessagePacker, type PackFormat, type PackMode } from './pack.js';
import { signalKey } from './schema-v2.js';
import {
  FORMAT_ID_V3,
  SIGNALS_MAX_V3,
  ZLIB_OP,
  subjectSources,
  subjectTransport,
  type SignalsMessageV3,
  type ZlibMessageV3,
} from './schema-v3.js';
import { signalsBodyV3, type SignalPartsV3 } from './write-v3.js';

/** One signal as the packer merges it: a one-signal message taken apart. */
export interface SignalUnitV3 extends SignalPartsV3 {
  /** The one-signal message, as journaled. */
  json: string;
  /** signalKey (run, signal, subject): what the journal records of the messages that carry it. */
  key: string;
}

/** The unit of a one-signal format-3 message this publisher built (the journal's own bytes: not validated here). */
export function signalUnitV3(json: string): SignalUnitV3 {
  const m = JSON.parse(json) as SignalsMessageV3;
  const subject = m.subjects[0]!;
  const { i, dt, ...entry } = subject.sig[0]!;
  const signal = m.ids[i]!;
  const at = Date.parse(m.at) + dt;
  return {
    run: m.run,
    at,
    fetchedAt: new Date(at).toISOString(),
    signal,
    subject: subject.id,
    tr: subjectTransport(subject)!,
    sources: subjectSources(m, subject),
    entry,
    json,
    key: signalKey({ run: m.run, signal, subject: subject.id }),
  };
}

export interface PackedMessageV3 {
  mode: PackMode;
  /** Always UTF-8 JSON: a `dense` message is JSON too (`op: "zlib"`). */
  encoding: 'json';
  bytes: Buffer;
  /** The signals inside, in index order. */
  units: SignalUnitV3[];
  /** Their keys, in index order: what the journal records before the transaction id is used. */
  keys: string[];
}

/** A format-3 message deflated into `op: "zlib"` (best compression: the fewer messages, the lower the fees). */
export function zlibMessageV3(json: Buffer): Buffer {
  const message: ZlibMessageV3 = {
    fmt: FORMAT_ID_V3,
    op: ZLIB_OP,
    zlib: deflateSync(json, { level: 9 }).toString('base64'),
  };
  return Buffer.from(JSON.stringify(message), 'utf8');
}

/** The JSON text of a format-3 message this publisher built, an `op: "zlib"` one inflated (for previews). */
export function readableJsonV3(bytes: Buffer): { text: string; zlib: boolean } {
  const text = bytes.toString('utf8');
  const value = JSON.parse(text) as { op?: unknown; zlib?: unknown };
  return value.op === ZLIB_OP && typeof value.zlib === 'string'
    ? { text: inflateSync(Buffer.from(value.zlib, 'base64')).toString('utf8'), zlib: true }
    : { text, zlib: false };
}

/** Largest `dt` of a message: signals further apart than this from its first one go in another message. */
const DT_MAX_MS = 86_400_000;
/** Signals of a group the packer keeps together; with at most this many groups a message stays within SIGNALS_MAX_V3. */
const GROUP_MAX = 8;
const GROUPS_MAX = SIGNALS_MAX_V3 / GROUP_MAX;
/**
 * Messages `json` mode keeps open at once: enough that a burst of large subjects (unreachable agents fail fast and
 * together at a run's start) each wait for a smaller partner instead of going out alone.
 */
const OPEN_BINS = 16;

interface Bin {
  groups: Group[];
  encoded: PackedMessageV3;
  /** When its first subject came (the caller's clock). */
  since: number;
}

type Group = SignalUnitV3[];

function groupFormat(mode: PackMode, maxBytes: number): PackFormat<Group, PackedMessageV3> {
  const dense = mode === 'dense';
  const bodyJson = (groups: Group[]) => {
    const { body, order } = signalsBodyV3(groups.flat());
    return { json: Buffer.from(JSON.stringify(body), 'utf8'), order };
  };
  return {
    mode,
    encode(groups) {
      const { json, order } = bodyJson(groups);
      // A message too small to gain from deflating (base64 costs a third) goes out as readable JSON, even dense.
      const zipped = dense ? zlibMessageV3(json) : undefined;
      const bytes = zipped && zipped.length < json.length ? zipped : json;
      return { mode, encoding: 'json', bytes, units: order, keys: order.map((u) => u.key) };
    },
    single(group) {
      if (group.length > 1) return this.encode([group]);
      const unit = group[0]!;
      const bytes = Buffer.from(unit.json, 'utf8');
      if (bytes.length > maxBytes) throw new MessageTooLargeError(bytes.length, maxBytes, 'format-3 signal message');
      return { mode, encoding: 'json', bytes, units: [unit], keys: [unit.key] };
    },
    belongs(first, count, group) {
      const head = first[0]!;
      if (count >= GROUPS_MAX || group.some((u) => u.run !== head.run || Math.abs(u.at - head.at) > DT_MAX_MS)) {
        return false;
      }
      return mode !== 'subject' || group[0]!.subject === head.subject;
    },
    // The MessagePacker skips deflating a lone group whose deflated size surely fits: its JSON, which dense falls
    // back to, is never larger than that bound.
    aloneJsonBytes: (group) => bodyJson([group]).json.length,
    jsonBytes: (group) => group.reduce((n, u) => n + u.json.length, 0),
  };
}

/**
 * Packs format-3 signals into messages incrementally, a subject's signals at a time (`addGroup`); `flush` returns the
 * partly filled message. In `none` mode every signal is its own message.
 */
export class SignalPackerV3 {
  readonly mode: PackMode;
  private readonly maxBytes: number;
  private readonly format: PackFormat<Group, PackedMessageV3>;
  private readonly packer: MessagePacker<Group, PackedMessageV3>;
  /** `json` mode: the open messages, oldest first, each with its groups encoded (see addJson). */
  private bins: Bin[] = [];

  constructor(options: { mode: PackMode; maxBytes?: number }) {
    this.mode = options.mode;
    this.maxBytes = Math.min(options.maxBytes ?? MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES);
    this.format = groupFormat(this.mode, this.maxBytes);
    this.packer = new MessagePacker(this.format, this.maxBytes);
  }

  /** Signals added and not yet returned in a message (groups, for the packer; callers ask only whether any). */
  get pending(): number {
    return this.packer.pending + this.bins.length;
  }

  /** Adds one subject's signals (of one run) at time `now`; returns the messages that became full. */
  addGroup(units: readonly SignalUnitV3[], now = Date.now()): PackedMessageV3[] {
    if (this.mode === 'none') return units.map((u) => this.format.single([u]));
    const out: PackedMessageV3[] = [];
    for (const part of this.parts(units))
      out.push(...(this.mode === 'json' ? this.addJson(part, now) : this.packer.add(part)));
    return out;
  }

  /** `json` mode: when the oldest open message got its first subject (undefined when none is open). */
  oldestOpen(): number | undefined {
    return this.bins.length === 0 ? undefined : Math.min(...this.bins.map((b) => b.since));
  }

  /** `json` mode: the open messages whose first subject came at or before `cutoff`. */
  flushOpenedBy(cutoff: number): PackedMessageV3[] {
    const old = this.bins.filter((b) => b.since <= cutoff);
    this.bins = this.bins.filter((b) => b.since > cutoff);
    return old.map((b) => b.encoded);
  }

  flush(): PackedMessageV3[] {
    const open = this.bins.map((b) => b.encoded);
    this.bins = [];
    return [...open, ...this.packer.flush()];
  }

  /**
   * `json` mode keeps up to OPEN_BINS messages open (first fit): a subject that does not fit one may fit another, so
   * few messages go out holding a single subject. A message that holds several subjects and does not fit the next one
   * goes out at once; the oldest goes out when all OPEN_BINS are taken. Measuring is exact and cheap
   * here (JSON.stringify of ~1 KiB); dense mode keeps the one open message of MessagePacker, whose estimates spare
   * deflating on every add.
   */
  private addJson(group: Group, now: number): PackedMessageV3[] {
    const out: PackedMessageV3[] = [];
    let home: Bin | undefined;
    for (const bin of [...this.bins]) {
      const encoded = this.format.belongs(bin.groups[0]!, bin.groups.length, group)
        ? this.format.encode([...bin.groups, group])
        : undefined;
      if (encoded && encoded.bytes.length <= this.maxBytes) {
        bin.groups.push(group);
        bin.encoded = encoded;
        home = bin;
        break;
      }
      // A message with several subjects that this one does not fit is as good as full: it goes now. One with a
      // single large subject stays open for a smaller partner.
      if (bin.groups.length > 1) {
        out.push(bin.encoded);
        this.bins.splice(this.bins.indexOf(bin), 1);
      }
    }
    if (!home) {
      if (this.bins.length >= OPEN_BINS) out.push(this.bins.shift()!.encoded);
      this.bins.push({ groups: [group], encoded: this.format.encode([group]), since: now });
    }
    return out;
  }

  /** The group in parts of at most GROUP_MAX signals that each fit a message alone (only a huge group is split). */
  private *parts(units: readonly SignalUnitV3[]): Generator<Group> {
    for (let k = 0; k < units.length; k += GROUP_MAX) {
      const chunk = units.slice(k, k + GROUP_MAX);
      if (this.fits(chunk)) {
        yield chunk;
        continue;
      }
      let part: Group = [];
      for (const u of chunk) {
        if (part.length > 0 && !this.fits([...part, u])) {
          yield part;
          part = [];
        }
        part.push(u);
      }
      if (part.length > 0) yield part;
    }
  }

  private bodyBytes(group: Group): number {
    return Buffer.byteLength(JSON.stringify(signalsBodyV3(group).body), 'utf8');
  }

  private fits(group: Group): boolean {
    // Its one-signal messages together fit, or its JSON does: then it surely fits (a dense message is never larger
    // than its JSON, which it falls back to). Only a large group is encoded to find out.
    if (this.format.jsonBytes(group) <= this.maxBytes || this.bodyBytes(group) <= this.maxBytes) return true;
    return this.format.encode([group]).bytes.length <= this.maxBytes;
  }
}
