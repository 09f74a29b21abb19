/**
 * Topic running hash, version 3. The consensus node feeds these values through java.io.ObjectOutputStream, so the
 * hashed bytes include Java serialization framing that the protobuf docs do not mention (see the network digest §4).
 */
import { createHash } from 'node:crypto';

export const RUNNING_HASH_VERSION = 3;

// aced0005 = stream magic+version; then TC_ARRAY + class descriptor of byte[] ("[B", its serialVersionUID,
// SC_SERIALIZABLE, no fields, end of block data, no superclass), then the array length 48.
const HEADER = Buffer.from(
  'aced0005' + '7572' + '00025b42' + 'acf317f8060854e0' + '02' + '0000' + '78' + '70' + '00000030',
  'hex',
);
// TC_BLOCKDATA of 76 bytes: seven longs, one int, one long.
const BLOCK = Buffer.from('774c', 'hex');
// Second byte[]: TC_ARRAY + TC_REFERENCE to the class handle 0x7e0000, then the length 48.
const SECOND_ARRAY = Buffer.from('7571' + '007e0000' + '00000030', 'hex');

export interface RunningHashInput {
  previous: Uint8Array; // 48 bytes; all zero for a new topic
  payer: { shard: number; realm: number; num: number };
  topic: { shard: number; realm: number; num: number };
  consensusSeconds: bigint;
  consensusNanos: number;
  sequenceNumber: number;
  message: Uint8Array;
}

/** The exact 211-byte stream that is hashed (exported for tests). */
export function runningHashPreimage(i: RunningHashInput): Buffer {
  if (i.previous.length !== 48) throw new Error('running hash must be 48 bytes');
  const block = Buffer.alloc(76);
  let o = 0;
  for (const v of [
    3n,
    BigInt(i.payer.shard),
    BigInt(i.payer.realm),
    BigInt(i.payer.num),
    BigInt(i.topic.shard),
    BigInt(i.topic.realm),
    BigInt(i.topic.num),
    i.consensusSeconds,
  ]) {
    block.writeBigInt64BE(v, o);
    o += 8;
  }
  block.writeInt32BE(i.consensusNanos, o);
  block.writeBigInt64BE(BigInt(i.sequenceNumber), o + 4);
  const messageHash = createHash('sha384').update(i.message).digest();
  return Buffer.concat([HEADER, i.previous, BLOCK, block, SECOND_ARRAY, messageHash]);
}

export function nextRunningHash(i: RunningHashInput): Buffer {
  return createHash('sha384').update(runningHashPreimage(i)).digest();
}
