/**
 * Before the first transaction of a command: is any consensus node there at all? Without this, a command against a
 * network that is not running waits out the SDK's retries (minutes) and then says "timeout exceeded". A plain TCP
 * connect to the node's gRPC port answers in milliseconds (refused) or within the probe's deadline (filtered).
 */
import { connect } from 'node:net';
import { Hcs25Error } from '../core/errors.js';

/** Nodes tried at once; a public network lists dozens, and one answering is enough. */
const MAX_PROBED = 6;
export const PROBE_TIMEOUT_MS = 3_000;

function probe(address: string, timeoutMs: number): Promise<string | undefined> {
  const at = address.lastIndexOf(':');
  const host = address.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(at + 1));
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (problem: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' ? 'connection refused' : (err.code ?? err.message)),
    );
  });
}

/** Resolves when one of `addresses` accepts a connection; otherwise throws NODE_UNREACHABLE naming what was tried. */
export async function ensureConsensusReachable(
  addresses: readonly string[],
  network: string,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<void> {
  const tried = [...addresses].sort(() => Math.random() - 0.5).slice(0, MAX_PROBED);
  if (tried.length === 0) return;
  const problems = await Promise.all(tried.map((a) => probe(a, timeoutMs)));
  if (problems.some((p) => p === undefined)) return;
  const what = tried.map((a, i) => `${a}: ${problems[i]}`).join('; ');
  throw new Hcs25Error('NODE_UNREACHABLE', `no consensus node of the ${network} network answered (${what})`, {
    hint:
      network === 'local'
        ? 'start a local node (`hcs25 local-node`, or hiero-local-node), or pass --network testnet|mainnet'
        : 'check your connection and --network (HCS25_NETWORK / HCS25_NODES)',
  });
}
