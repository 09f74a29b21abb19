import { AccountId, Timestamp, TransactionId, TransactionReceiptQuery } from '@hashgraph/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/hedera/client.js';
import { boundTimestampMemory, newTransactionId } from '../../src/hedera/tx.js';

afterEach(() => vi.restoreAllMocks());

describe('newTransactionId', () => {
  const payer = AccountId.fromString('0.0.1001');

  it('never asks the SDK to generate (its generator remembers every timestamp for the life of the process)', () => {
    const generate = vi.spyOn(Timestamp, 'generate');
    const generateId = vi.spyOn(TransactionId, 'generate');
    for (let i = 0; i < 100; i++) newTransactionId(payer);
    expect(generate).not.toHaveBeenCalled();
    expect(generateId).not.toHaveBeenCalled();
  });

  it('gives distinct, increasing ids for the payer, valid from 3-8 s ago', () => {
    const before = Date.now();
    const ids = Array.from({ length: 5_000 }, () => newTransactionId(payer));
    const after = Date.now();
    expect(new Set(ids.map((id) => id.toString())).size).toBe(ids.length);
    const starts = ids.map(
      (id) => BigInt(id.validStart!.seconds.toString()) * 1_000_000_000n + BigInt(id.validStart!.nanos.toString()),
    );
    for (let i = 1; i < starts.length; i++) expect(starts[i]! > starts[i - 1]!).toBe(true);
    const firstMs = Number(starts[0]! / 1_000_000n);
    expect(firstMs).toBeLessThanOrEqual(before - 3_000);
    expect(firstMs).toBeGreaterThanOrEqual(before - 8_000);
    expect(Number(starts.at(-1)! / 1_000_000n)).toBeLessThanOrEqual(after - 3_000 + 1);
    expect(ids.every((id) => id.accountId!.toString() === '0.0.1001')).toBe(true);
  });
});

describe('boundTimestampMemory', () => {
  it('is installed by createClient: the SDK then generates through it (a receipt query makes a payment id it never uses)', () => {
    const client = createClient({
      network: { ledger: 'local', nodes: { '127.0.0.1:1': '0.0.3' }, mirrorGrpc: ['127.0.0.1:2'] } as never,
      operator: undefined,
    });
    client.close();
    const handle = boundTimestampMemory();
    const before = handle.remembered();
    TransactionId.generate(AccountId.fromString('0.0.1001'));
    expect(handle.remembered()).toBe(before + 1);
    expect(new TransactionReceiptQuery()).toBeInstanceOf(TransactionReceiptQuery);
  });

  it('makes SDK-shaped timestamps (3-8 s ago), draws again on a repeat, and remembers only the last 30-60 s', () => {
    const handle = boundTimestampMemory();
    let now = 1_700_000_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now);
    // jitter, nanoseconds: the same draws twice, then other nanoseconds.
    const random = vi.spyOn(Math, 'random');
    random
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.25);
    const a = Timestamp.generate();
    const b = Timestamp.generate();
    expect(a.toString()).toBe('1699999994.500500000');
    expect(b.toString()).not.toBe(a.toString());
    expect(b.toString()).toBe('1699999994.500250000');
    random.mockRestore();
    // 10 minutes at 100 timestamps a second: only the last 30-60 s are kept.
    const seen = new Set<string>();
    for (let i = 0; i < 60_000; i++) {
      now += 10;
      seen.add(Timestamp.generate().toString());
    }
    expect(seen.size).toBe(60_000);
    expect(handle.remembered()).toBeLessThanOrEqual(6_000);
    expect(handle.remembered()).toBeGreaterThanOrEqual(3_000);
  });
});
