/**
 * The size search every packed on-chain format shares (signal packs, score record batches): items go into the open
 * message until the next one would push it past the limit, measured on the bytes actually sent (deflated in `dense`
 * mode). What an item is, which items may share a message and how a message is encoded is the format's business
 * ({@link PackFormat}); this class only decides where one message ends and the next begins.
 */
import { MAX_MESSAGE_BYTES } from './schemas.js';

export const PACK_MODES = ['dense', 'subject', 'none'] as const;
export type PackMode = (typeof PACK_MODES)[number];

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
    const alone = this.mode === 'dense' && deflateBound(this.format.aloneJsonBytes(item)) <= this.maxBytes ? undefined : this.format.encode([item]);
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

/** `o` without `key`, by copying: a deleted key leaves a slow dictionary object. */
export function withoutKey(o: Record<string, unknown>, key: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (k !== key) out[k] = o[k];
  return out;
}
