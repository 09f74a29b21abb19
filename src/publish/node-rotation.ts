/**
 * Which consensus nodes a transaction is signed for: the client's nodes in turn, with the nodes the SDK passed over
 * lately put last. The SDK tries a node list in order, and near a local node (127.0.0.1:50211) it waits for a
 * failed node to be readmitted and then spends a whole gRPC deadline finding it still down.
 */
import { AccountId, type Client } from '@hashgraph/sdk';

/** Nodes a transaction is signed for and a receipt is asked of. */
export const NODES_PER_REQUEST = 3;
/** How long a node that was passed over goes to the back of node lists. */
const SUSPECT_MS = 30_000;

export class NodeRotation {
  private cursor = 0;
  /** Nodes the SDK passed over lately (down, or failing), with when to put them first again. */
  private readonly suspect = new Map<string, number>();

  constructor(private readonly nodes: readonly string[]) {}

  get size(): number {
    return this.nodes.length;
  }

  /** The next few nodes in turn, suspect ones last. */
  pick(): string[] {
    // A few nodes per transaction lets the SDK fail over; signing for every node of a public network would not pay.
    const rotated = this.nodes.map((_, i) => this.nodes[(this.cursor + i) % this.nodes.length]!);
    this.cursor = (this.cursor + 1) % this.nodes.length;
    return this.healthyFirst(rotated).slice(0, NODES_PER_REQUEST);
  }

  /** Suspect nodes last. */
  healthyFirst(nodes: string[]): string[] {
    const now = Date.now();
    const bad = (n: string): boolean => (this.suspect.get(n) ?? 0) > now;
    return [...nodes.filter((n) => !bad(n)), ...nodes.filter(bad)];
  }

  /** The SDK walks a transaction's node list in order: nodes before the one that answered were down or failing. */
  noteAnswer(nodes: string[], answered: string): void {
    this.suspect.delete(answered);
    for (const node of nodes) {
      if (node === answered) break;
      this.suspect.set(node, Date.now() + SUSPECT_MS);
    }
  }
}

/** The consensus nodes of a client, each once. */
export function nodesOf(client: Client): AccountId[] {
  const seen = new Map<string, AccountId>();
  for (const value of Object.values(client.network)) {
    const id = typeof value === 'string' ? AccountId.fromString(value) : value;
    seen.set(id.toString(), id);
  }
  return [...seen.values()];
}
