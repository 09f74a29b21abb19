/**
 * Child-process side of startLocalNodeProcess(): runs one emulator and answers the parent over IPC.
 * Started as `node process-entry.js '<LocalNodeOptions JSON>'` by process.ts; not meant to be run by hand.
 */
import { startLocalNode, type LocalNode } from './index.js';
import type { ChildReply, ChildRequest } from './process.js';
import { Hcs25Error, errorMessage } from '../core/errors.js';

function send(msg: ChildReply): void {
  process.send?.(msg);
}

let node: LocalNode;
try {
  node = await startLocalNode({ quiet: true, ...(JSON.parse(process.argv[2] ?? '{}') as object) });
} catch (err) {
  const e = err instanceof Hcs25Error ? err : undefined;
  send({
    type: 'error',
    code: e?.code ?? 'START_FAILED',
    message: errorMessage(err),
    ...(e?.hint ? { hint: e.hint } : {}),
  });
  process.exit(1);
}

const stop = async (): Promise<never> => {
  await node.stop();
  process.exit(0);
};

const failed = (msg: ChildRequest, err: unknown): void => {
  send({ type: 'failed', id: 'id' in msg ? msg.id : 0, message: err instanceof Error ? err.message : String(err) });
};

process.on('message', (msg: ChildRequest) => {
  try {
    switch (msg.type) {
      case 'usage':
        send({ type: 'usage', id: msg.id, cpu: process.cpuUsage(), stats: node.stats() });
        return;
      case 'nodes':
        send({ type: 'nodes', id: msg.id, nodes: node.consensusNodes() });
        return;
      case 'fault': {
        const f = (msg.node ? node.nodeFaults(msg.node) : node.faults) as unknown as Record<
          string,
          ((...args: unknown[]) => void) | undefined
        >;
        const op = f[msg.op];
        if (!op) throw new Hcs25Error('BAD_FAULT', `fault operation ${msg.op} does not apply to one node`);
        op(...msg.args);
        send({ type: 'done', id: msg.id });
        return;
      }
      case 'consensusNode':
        (msg.op === 'stop' ? node.stopConsensusNode(msg.node) : node.startConsensusNode(msg.node)).then(
          () => send({ type: 'done', id: msg.id }),
          (err: unknown) => failed(msg, err),
        );
        return;
      case 'stop':
        void stop();
        return;
    }
  } catch (err) {
    failed(msg, err);
  }
});
// The parent died or closed the channel: do not linger holding the ports.
process.on('disconnect', () => void stop());

send({
  type: 'ready',
  ports: node.ports,
  network: node.network,
  mirrorRestUrl: node.mirrorRestUrl,
  operator: node.operator,
  accounts: node.accounts,
});
