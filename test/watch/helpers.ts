import type { Client } from '@hashgraph/sdk';
import { submitMessage } from '../../src/hedera/tx.js';

/** Polls `fn` until it returns a value (a deadline, not a speed assertion). */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Lists an agent record in an HCS-2 registry (inline metadata). */
export function register(client: Client, registry: string, record: object): ReturnType<typeof submitMessage> {
  return submitMessage(
    client,
    registry,
    JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) }),
    undefined,
  );
}
