/**
 * When the topic cannot be created after the definition file was inscribed, the error names the file so a second
 * attempt reuses it (`--schemas`) instead of paying for another. The topic creation is made to fail here.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHcs25Client } from '../../src/client.js';
import { Hcs25Error } from '../../src/core/errors.js';
import { parseHrl } from '../../src/core/hrl.js';
import { readHcs1File } from '../../src/hedera/hcs1.js';
import { createTopic } from '../../src/publish/create-topic.js';
import { parseFormatDefinition } from '../../src/format/definition.js';
import { emulatorConfig, startHarness, tempDir, type Harness } from './helpers.js';

vi.mock('../../src/publish/topic.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/publish/topic.js')>();
  return {
    ...original,
    createSignalTopic: vi.fn(async () => {
      throw new Hcs25Error('LEDGER_TX', 'creating the topic failed: INSUFFICIENT_PAYER_BALANCE');
    }),
  };
});

let h: Harness;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
  tmp.cleanup();
});

describe('createTopic', () => {
  it('names the inscribed file in the error when the topic fails, so it can be reused', async () => {
    const client = createHcs25Client(emulatorConfig(h, tmp.dir, {}), { sdk: h.client });
    try {
      const err = await createTopic(client).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Hcs25Error);
      expect((err as Hcs25Error).code).toBe('LEDGER_TX');
      expect((err as Hcs25Error).message).toMatch(/INSUFFICIENT_PAYER_BALANCE/);
      const hint = (err as Hcs25Error).hint ?? '';
      const hrl = /try again with --schemas (hcs:\/\/1\/\S+) /.exec(hint)?.[1];
      expect(hrl, hint).toBeDefined();
      const file = await readHcs1File(h.mirror, parseHrl(hrl!)!.topicId);
      expect(parseFormatDefinition(file.bytes, hrl!).format).toBe('hcs25-tool/3');

      // Nothing was inscribed, so there is nothing to name: the error is passed on as it is.
      const plain = await createTopic(client, { inscribeSchemas: false }).catch((e: unknown) => e);
      expect((plain as Hcs25Error).hint).toBeUndefined();
    } finally {
      await client.close();
    }
  });
});
