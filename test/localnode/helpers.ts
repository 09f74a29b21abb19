import { createHash } from 'node:crypto';
import { createServer } from 'node:net';
import { startLocalNode, type LocalNode, type LocalNodeOptions } from '../../src/localnode/index.js';

/** An emulator on ephemeral ports, so test files and other engineers' runs never collide. */
export function startEphemeral(options: LocalNodeOptions = {}): Promise<LocalNode> {
  return startLocalNode({
    ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
    quiet: true,
    accounts: 2,
    ...options,
  });
}

/**
 * Running hash v3 recomputed straight from the byte layout in the network digest §4 (a separate implementation
 * from src/localnode/running-hash.ts on purpose).
 */
export function specRunningHash(
  prev: Uint8Array,
  payerNum: number,
  topicNum: number,
  seconds: bigint,
  nanos: number,
  seq: number,
  message: Uint8Array,
): Buffer {
  const i64 = (v: bigint | number): string => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0');
  const i32 = (v: number): string => (v >>> 0).toString(16).padStart(8, '0');
  const hex =
    'aced0005' +
    '7572' +
    '0002' +
    Buffer.from('[B').toString('hex') +
    'acf317f8060854e0' +
    '02' +
    '0000' +
    '78' +
    '70' +
    '00000030' +
    Buffer.from(prev).toString('hex') +
    '77' +
    '4c' +
    i64(3) +
    i64(0) +
    i64(0) +
    i64(payerNum) +
    i64(0) +
    i64(0) +
    i64(topicNum) +
    i64(seconds) +
    i32(nanos) +
    i64(seq) +
    '7571' +
    '007e0000' +
    '00000030' +
    createHash('sha384').update(message).digest('hex');
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

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A base port for a test of the default node spacing: base, base + step, … are free now. Drawn below Linux's
 * ephemeral range (32768+), where only explicit binds land, so a parallel test file's ephemeral ports never take them.
 */
export async function freePortRun(count: number, step: number): Promise<number> {
  const highest = 32_767 - step * (count - 1);
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 10_000 + Math.floor(Math.random() * (highest - 10_000));
    const ports = Array.from({ length: count }, (_, i) => base + i * step);
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return base;
  }
  throw new Error(`no run of ${count} free ports ${step} apart`);
}
