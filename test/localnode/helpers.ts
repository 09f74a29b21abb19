import { createHash } from 'node:crypto';
import { startLocalNode, type LocalNode, type LocalNodeOptions } from '../../src/localnode/index.js';

/** An emulator on ephemeral ports, so test files and other engineers' runs never collide. */
export function startEphemeral(options: LocalNodeOptions = {}): Promise<LocalNode> {
  return startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true, accounts: 2, ...options });
}

/**
 * Running hash v3 recomputed straight from the byte layout in the network digest §4 (a separate implementation
 * from src/localnode/running-hash.ts on purpose).
 */
export function specRunningHash(prev: Uint8Array, payerNum: number, topicNum: number, seconds: bigint, nanos: number, seq: number, message: Uint8Array): Buffer {
  const i64 = (v: bigint | number): string => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0');
  const i32 = (v: number): string => (v >>> 0).toString(16).padStart(8, '0');
  const hex =
    'aced0005' +
    '7572' + '0002' + Buffer.from('[B').toString('hex') + 'acf317f8060854e0' + '02' + '0000' + '78' + '70' +
    '00000030' + Buffer.from(prev).toString('hex') +
    '77' + '4c' +
    i64(3) + i64(0) + i64(0) + i64(payerNum) + i64(0) + i64(0) + i64(topicNum) + i64(seconds) + i32(nanos) + i64(seq) +
    '7571' + '007e0000' + '00000030' + createHash('sha384').update(message).digest('hex');
  const bytes = Buffer.from(hex, 'hex');
  if (bytes.length !== 211) throw new Error(`spec preimage is ${bytes.length} bytes, expected 211`);
  return createHash('sha384').update(bytes).digest();
}

// biome-ignore lint/suspicious/noExplicitAny: tests read mirror answers of many shapes
export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

/** Polls until fn returns a value (not undefined); bounded so a broken emulator fails instead of hanging. */
export async function eventually<T>(fn: () => Promise<T | undefined>, tries = 100, everyMs = 50): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`condition not met after ${tries} tries`);
}
