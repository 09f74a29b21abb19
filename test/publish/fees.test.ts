import { describe, expect, it } from 'vitest';
import type { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { EXCHANGE_RATE, transactionFee } from '../../src/localnode/fees.js';
import {
  DENSE_SIGNALS_PER_MESSAGE,
  JSON_SIGNALS_PER_MESSAGE,
  estimateSubmitFee,
  expectedMessages,
} from '../../src/publish/fees.js';

function mirrorAt(cents: number, hbars: number): MirrorRestClient {
  return {
    getJson: async () => ({ current_rate: { cent_equivalent: cents, hbar_equivalent: hbars } }),
  } as unknown as MirrorRestClient;
}

describe('fee forecast', () => {
  it('is what the emulator charges for a message, to the tinybar', async () => {
    const estimate = await estimateSubmitFee('local', mirrorAt(EXCHANGE_RATE.centEquiv, EXCHANGE_RATE.hbarEquiv));
    expect(estimate).toEqual({ tinybar: transactionFee('consensusSubmitMessage'), source: 'mirror' });
  });

  it("is $0.0008 a message on Hedera (2026 fee schedule) at the mirror node's exchange rate", async () => {
    // 5 ¢ per ℏ: $0.0008 = 0.016 ℏ = 1,600,000 tinybars.
    expect((await estimateSubmitFee('mainnet', mirrorAt(5, 1))).tinybar).toBe(1_600_000n);
    expect((await estimateSubmitFee('testnet', mirrorAt(30, 1))).tinybar).toBe(266_667n);
  });

  it('counts messages by pack mode', () => {
    expect(expectedMessages(1000, 3, 'none')).toBe(3000);
    expect(expectedMessages(1000, 3, undefined)).toBe(3000);
    expect(expectedMessages(1000, 3, 'subject')).toBe(1000);
    expect(expectedMessages(1000, 3, 'dense')).toBe(Math.ceil(3000 / DENSE_SIGNALS_PER_MESSAGE));
    expect(expectedMessages(1000, 3, 'json')).toBe(Math.ceil(3000 / JSON_SIGNALS_PER_MESSAGE));
    // Forecasts stay on the safe side of what format 3 packs (test/format/v3.test.ts measures it).
    expect(expectedMessages(1000, 3, 'json') / 1000).toBeGreaterThanOrEqual(0.5);
    expect(expectedMessages(1000, 3, 'dense')).toBeLessThan(expectedMessages(1000, 3, 'json'));
    expect(expectedMessages(0, 3, 'dense')).toBe(0);
  });
});
