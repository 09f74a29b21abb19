import { PrivateKey } from '@hashgraph/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { readJournal } from '../../src/publisher/journal.js';
import { revealRun } from '../../src/actions/reveal-run.js';
import { createHcs25Client } from '../../src/client.js';
import { journalWith, tempDir } from '../publisher/helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('revealRun', () => {
  it('refuses to reveal a run on another network than it ran on, and sends nothing', async () => {
    const journal = await journalWith(tmp.dir, ['k']); // a run on `local`
    journal.append({ t: 'end', status: 'complete' });
    await journal.close();
    const config = loadConfig({
      cwd: tmp.dir,
      // Another network, on addresses where nothing listens: nothing may be sent anyway.
      env: {
        HCS25_NETWORK: 'custom',
        HCS25_NODES: '127.0.0.1:1=0.0.3',
        HCS25_MIRROR_REST_URL: 'http://127.0.0.1:1',
        HCS25_OPERATOR_ID: '0.0.2',
        HCS25_OPERATOR_KEY: PrivateKey.generateED25519().toStringDer(),
        HCS25_STATE_DIR: tmp.dir,
      },
    });
    await expect(revealRun(createHcs25Client(config), { run: journal.runId, force: true })).rejects.toThrow(/ran on local, not custom/);
    const { state } = await readJournal(journal.path);
    expect(state.reveals.size).toBe(0);
  });
});
