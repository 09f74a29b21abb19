/**
 * Several consensus nodes on one shared ledger, driven by the real SDK: node accounts and ports, a transaction only
 * accepted by the node it names, receipts from any node, duplicates across nodes, per-node faults, and a node that
 * stops and comes back while the others and the mirror keep serving.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AccountId,
  AddressBookQuery,
  Client,
  FileId,
  MaxAttemptsOrTimeoutError,
  PrecheckStatusError,
  PrivateKey,
  TopicCreateTransaction,
  TopicMessageSubmitTransaction,
  TransactionId,
  TransactionReceiptQuery,
} from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localNetwork } from '../../src/config/networks.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import type { LocalNodeProcess } from '../../src/localnode/process.js';
import { eventually, freePortRun, getJson, startEphemeral } from './helpers.js';

const N3 = AccountId.fromString('0.0.3');
const N4 = AccountId.fromString('0.0.4');
const N5 = AccountId.fromString('0.0.5');

let node: LocalNode;
let client: Client;
let topicId: string;

beforeAll(async () => {
  node = await startEphemeral({ nodes: 3 });
  client = node.client();
  const receipt = await (await new TopicCreateTransaction().setNodeAccountIds([N3]).execute(client)).getReceipt(client);
  topicId = receipt.topicId!.toString();
});
afterAll(async () => {
  client.close();
  await node.stop();
});

function submit(message: string, nodes: AccountId[], id?: TransactionId): TopicMessageSubmitTransaction {
  const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(message).setNodeAccountIds(nodes);
  if (id) tx.setTransactionId(id);
  return tx;
}

async function mirrorTx(id: TransactionId, on: LocalNode = node): Promise<{ node: string; result: string }[]> {
  const key = `${id.accountId!.toString()}-${id.validStart!.seconds.toString()}-${id.validStart!.nanos.toString().padStart(9, '0')}`;
  return eventually(async () => {
    const { status, body } = await getJson(`${on.mirrorRestUrl}/api/v1/transactions/${key}`);
    return status === 200 ? (body.transactions as { node: string; result: string }[]) : undefined;
  });
}

describe('a network of several consensus nodes', () => {
  it('runs node accounts 0.0.3, 0.0.4, 0.0.5 on their own ports and publishes them as the network map and address book', async () => {
    const nodes = node.consensusNodes();
    expect(nodes.map((n) => n.accountId)).toEqual(['0.0.3', '0.0.4', '0.0.5']);
    expect(new Set(nodes.map((n) => n.port)).size).toBe(3);
    expect(nodes.every((n) => n.running && n.port > 0)).toBe(true);
    expect(node.ports.consensus).toBe(nodes[0]!.port);
    expect(node.network).toEqual(Object.fromEntries(nodes.map((n) => [`127.0.0.1:${n.port}`, n.accountId])));
    expect(client.network).toEqual(
      Object.fromEntries(nodes.map((n) => [`127.0.0.1:${n.port}`, AccountId.fromString(n.accountId)])),
    );

    const book = await new AddressBookQuery().setFileId(FileId.ADDRESS_BOOK).execute(client);
    expect(book.nodeAddresses.map((a) => [a.accountId?.toString(), a.addresses[0]?.port])).toEqual(
      nodes.map((n) => [n.accountId, n.port]),
    );
  });

  it('accepts a transaction at the node it names, answers its receipt on any node, and pays that node', async () => {
    const before = (await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.4`)).body.balance.balance as number;
    const response = await submit('via 0.0.4', [N4]).execute(client);
    expect(response.nodeId.toString()).toBe('0.0.4');
    const receipt = await new TransactionReceiptQuery()
      .setTransactionId(response.transactionId)
      .setNodeAccountIds([N5])
      .execute(client);
    expect(receipt.status.toString()).toBe('SUCCESS');
    expect((await mirrorTx(response.transactionId))[0]!.node).toBe('0.0.4');
    const after = (await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.4`)).body.balance.balance as number;
    expect(after).toBeGreaterThan(before);
  });

  it('refuses a transaction for another node with INVALID_NODE_ACCOUNT', async () => {
    // A client whose map says the first node's port is 0.0.4: the SDK signs for 0.0.4 and sends it to 0.0.3.
    const liar = Client.forNetwork(
      { [`127.0.0.1:${node.ports.consensus}`]: '0.0.4' },
      { scheduleNetworkUpdate: false },
    );
    liar.setOperator(node.operator.accountId, PrivateKey.fromStringDer(node.operator.privateKey));
    try {
      const err = await submit('wrong node', [N4])
        .setMaxAttempts(1)
        .execute(liar)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MaxAttemptsOrTimeoutError);
      expect(String((err as Error).message)).toContain('INVALID_NODE_ACCOUNT');
    } finally {
      liar.close();
    }
  });

  it('dedupes one transaction id across nodes: a resend to another node is DUPLICATE_TRANSACTION, and it lands once', async () => {
    const id = TransactionId.generate(node.operator.accountId);
    await (await submit('once', [N3], id).execute(client)).getReceipt(client);
    const err = await submit('once', [N5], id)
      .execute(client)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrecheckStatusError);
    expect((err as PrecheckStatusError).status.toString()).toBe('DUPLICATE_TRANSACTION');
    expect(await mirrorTx(id)).toHaveLength(1);
  });

  it('keeps faults per node: a node-level fault hits only that node, a network-wide one whichever node serves', async () => {
    node.nodeFaults('0.0.4').injectPrecheck('submitMessage', 'BUSY', 5);
    try {
      const busy = await submit('busy', [N4])
        .setMaxAttempts(2)
        .execute(client)
        .catch((e: unknown) => e);
      expect(busy).toBeInstanceOf(MaxAttemptsOrTimeoutError);
      expect(String((busy as Error).message)).toContain('BUSY');
      const ok = await submit('not busy', [N5]).execute(client);
      expect((await ok.getReceipt(client)).status.toString()).toBe('SUCCESS');
    } finally {
      node.faults.clear();
    }
    node.faults.injectPrecheck('submitMessage', 'INVALID_TOPIC_ID', 1);
    const refused = await submit('network-wide', [N5])
      .execute(client)
      .catch((e: unknown) => e);
    expect((refused as PrecheckStatusError).status?.toString()).toBe('INVALID_TOPIC_ID');
    expect(() => node.nodeFaults('0.0.9')).toThrow(/no consensus node 0\.0\.9/);
  });

  it('stops a node while the others and the mirror keep serving, and restarts it on the same port', async () => {
    const port = node.consensusNodes()[1]!.port;
    await node.stopConsensusNode('0.0.4');
    expect(node.consensusNodes()[1]).toMatchObject({ accountId: '0.0.4', running: false, port });
    // The SDK fails over from the stopped node to the next one in the transaction's list.
    // A short deadline: the SDK waits that long for a connection to the stopped node before moving on.
    const response = await submit('while 0.0.4 is down', [N4, N5]).setGrpcDeadline(1_000).execute(client);
    expect(response.nodeId.toString()).toBe('0.0.5');
    expect((await response.getReceipt(client)).status.toString()).toBe('SUCCESS');
    expect((await mirrorTx(response.transactionId))[0]).toMatchObject({ node: '0.0.5', result: 'SUCCESS' });

    await node.startConsensusNode('0.0.4');
    expect(node.consensusNodes()[1]).toMatchObject({ running: true, port });
    const back = await eventually(
      async () =>
        submit('0.0.4 is back', [N4])
          .execute(client)
          .catch(() => undefined),
      40,
      250,
    );
    expect(back.nodeId.toString()).toBe('0.0.4');
    expect((await back.getReceipt(client)).status.toString()).toBe('SUCCESS');
  });
});

describe('node options', () => {
  it("puts nodes 1000 ports apart by default, as the config's local network map expects (never 50212: TLS to the SDK)", async () => {
    // A free base rather than a fixed one, so this file runs beside others.
    const base = await freePortRun(3, 1000);
    const expected = localNetwork('127.0.0.1', { consensus: base, mirrorGrpc: 0, mirrorRest: 0 }, 3).nodes;
    expect(expected).toEqual({
      [`127.0.0.1:${base}`]: '0.0.3',
      [`127.0.0.1:${base + 1000}`]: '0.0.4',
      [`127.0.0.1:${base + 2000}`]: '0.0.5',
    });
    const n = await startLocalNode({
      quiet: true,
      accounts: 0,
      nodes: 3,
      ports: { consensus: base, mirrorGrpc: 0, mirrorRest: 0 },
    });
    try {
      expect(n.network).toEqual(expected);
    } finally {
      await n.stop();
    }
  });

  it('refuses bad node counts and port lists', async () => {
    await expect(startEphemeral({ nodes: 0 })).rejects.toThrow(/nodes must be 1\.\.32/);
    await expect(
      startLocalNode({ quiet: true, nodes: 2, ports: { consensus: [0, 0, 0], mirrorGrpc: 0, mirrorRest: 0 } }),
    ).rejects.toThrow(/nodes is 2 but 3/);
    await expect(
      startLocalNode({ quiet: true, ports: { consensus: [41001, 41001], mirrorGrpc: 0, mirrorRest: 0 } }),
    ).rejects.toThrow(/repeat/);
  });

  it('keeps which node handled a transaction across a restart from the state directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs25-multinode-'));
    try {
      const first = await startEphemeral({ nodes: 2, stateDir: dir });
      const c = first.client();
      const r = await new TopicCreateTransaction().setNodeAccountIds([N4]).execute(c);
      await r.getReceipt(c);
      c.close();
      await first.stop();
      const again = await startEphemeral({ nodes: 2, stateDir: dir });
      try {
        expect((await mirrorTx(r.transactionId, again))[0]!.node).toBe('0.0.4');
        expect((await getJson(`${again.mirrorRestUrl}/api/v1/accounts/0.0.4`)).status).toBe(200);
      } finally {
        await again.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('startLocalNodeProcess with several nodes', () => {
  it('runs them in a child process, with node faults and stop/start over IPC', async () => {
    // The child runs the built emulator (dist/), like the benchmarks do.
    const dist = new URL('../../dist/localnode/index.js', import.meta.url);
    if (!existsSync(dist)) throw new Error(`${dist.pathname} is missing: run \`npm run build\` first`);
    const { startLocalNodeProcess } = (await import(dist.href)) as {
      startLocalNodeProcess: typeof import('../../src/localnode/process.js').startLocalNodeProcess;
    };
    const child: LocalNodeProcess = await startLocalNodeProcess({
      nodes: 2,
      accounts: 0,
      ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 },
    });
    const c = child.client();
    try {
      expect(Object.values(child.network)).toEqual(['0.0.3', '0.0.4']);
      await child.stopConsensusNode('0.0.3');
      expect((await child.consensusNodes()).map((n) => n.running)).toEqual([false, true]);
      await child.nodeFaults('0.0.4').injectPrecheck('createTopic', 'INVALID_TOPIC_ID', 1);
      const refused = await new TopicCreateTransaction()
        .setNodeAccountIds([N4])
        .execute(c)
        .catch((e: unknown) => e);
      expect((refused as PrecheckStatusError).status?.toString()).toBe('INVALID_TOPIC_ID');
      const r = await new TopicCreateTransaction().setNodeAccountIds([N4]).execute(c);
      expect((await r.getReceipt(c)).status.toString()).toBe('SUCCESS');
      await child.startConsensusNode('0.0.3');
      expect((await child.consensusNodes()).every((n) => n.running)).toBe(true);
      await expect(child.stopConsensusNode('0.0.7')).rejects.toThrow(/no consensus node 0\.0\.7/);
    } finally {
      c.close();
      await child.stop();
    }
  });
});
