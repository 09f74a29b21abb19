import { AccountId, Timestamp, TransactionId } from '@hashgraph/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newTransactionId } from '../../src/hedera/tx.js';

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
    const starts = ids.map((id) => BigInt(id.validStart!.seconds.toString()) * 1_000_000_000n + BigInt(id.validStart!.nanos.toString()));
    for (let i = 1; i < starts.length; i++) expect(starts[i]! > starts[i - 1]!).toBe(true);
    const firstMs = Number(starts[0]! / 1_000_000n);
    expect(firstMs).toBeLessThanOrEqual(before - 3_000);
    expect(firstMs).toBeGreaterThanOrEqual(before - 8_000);
    expect(Number(starts.at(-1)! / 1_000_000n)).toBeLessThanOrEqual(after - 3_000 + 1);
    expect(ids.every((id) => id.accountId!.toString() === '0.0.1001')).toBe(true);
  });
});
