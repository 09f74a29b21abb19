/**
 * Mirror node gRPC (default port 5600): `ConsensusService/subscribeTopic` streams a topic's history from the
 * start time, then live messages, until the end time or the limit; `NetworkService/getNodes` returns this node.
 * Messages become visible `mirrorLagMs` after consensus, like a real mirror trailing the network.
 */
import { com, proto } from '@hashgraph/proto';
import { accountIdProto, toLong, topicNum, tsFromProto, tsToProto, txIdToProto, longToNumber, nowNs } from './codec.js';
import type { FaultPlan } from './faults.js';
import { grpc, newServer, rawMethod } from './grpc.js';
import { RUNNING_HASH_VERSION } from './running-hash.js';
import type { LedgerState, Topic, TopicMessage } from './state.js';
import { firstIndexAtOrAfter } from './topic-index.js';

const SUBSCRIBE_PATH = '/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic';
const GET_NODES_PATH = '/com.hedera.mirror.api.proto.NetworkService/getNodes';
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface MirrorClock {
  /** Current mirror lag in ms. */
  lagMs(): number;
}

function encodeMessage(m: TopicMessage): Buffer {
  const r: com.hedera.mirror.api.proto.IConsensusTopicResponse = {
    consensusTimestamp: tsToProto(m.ns),
    message: m.message,
    runningHash: m.runningHash,
    sequenceNumber: toLong(m.seq),
    runningHashVersion: toLong(RUNNING_HASH_VERSION),
    ...(m.chunk
      ? {
          chunkInfo: {
            initialTransactionID: txIdToProto(m.chunk.initialTxId),
            number: m.chunk.number,
            total: m.chunk.total,
          },
        }
      : {}),
  };
  return Buffer.from(com.hedera.mirror.api.proto.ConsensusTopicResponse.encode(r).finish());
}

interface Subscription {
  topic: Topic;
  next: number;
  endNs: bigint | null;
  remaining: number; // 0 = unlimited
  call: grpc.ServerWritableStream<Buffer, Buffer>;
  timer?: NodeJS.Timeout;
  waitingDrain: boolean;
  done: boolean;
}

export class TopicStreams {
  private readonly byTopic = new Map<number, Set<Subscription>>();

  constructor(
    private readonly state: LedgerState,
    private readonly clock: MirrorClock,
  ) {}

  open(call: grpc.ServerWritableStream<Buffer, Buffer>): void {
    let q: com.hedera.mirror.api.proto.ConsensusTopicQuery;
    try {
      q = com.hedera.mirror.api.proto.ConsensusTopicQuery.decode(call.request);
    } catch {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'malformed ConsensusTopicQuery' });
      return;
    }
    const num = topicNum(q.topicID);
    const topic = num == null ? undefined : this.state.topics.get(num);
    if (!topic || topic.createdWallMs + this.clock.lagMs() > Date.now()) {
      call.emit('error', { code: grpc.status.NOT_FOUND, details: `0.0.${num ?? '?'} does not exist` });
      return;
    }
    const startNs = q.consensusStartTime ? tsFromProto(q.consensusStartTime) : nowNs();
    const sub: Subscription = {
      topic,
      next: firstIndexAtOrAfter(topic.messages, startNs),
      endNs: q.consensusEndTime ? tsFromProto(q.consensusEndTime) : null,
      remaining: longToNumber(q.limit),
      call,
      waitingDrain: false,
      done: false,
    };
    let set = this.byTopic.get(topic.num);
    if (!set) {
      set = new Set();
      this.byTopic.set(topic.num, set);
    }
    set.add(sub);
    const close = (): void => this.finish(sub, false);
    call.on('cancelled', close);
    call.on('close', close);
    this.pump(sub);
  }

  /** A new message reached consensus on this topic. */
  notify(topic: number): void {
    for (const sub of this.byTopic.get(topic) ?? []) if (!sub.timer && !sub.waitingDrain) this.pump(sub);
  }

  private pump(sub: Subscription): void {
    if (sub.done) return;
    const lag = this.clock.lagMs();
    const now = Date.now();
    const msgs = sub.topic.messages;
    while (sub.next < msgs.length) {
      const m = msgs[sub.next] as TopicMessage;
      if (sub.endNs !== null && m.ns >= sub.endNs) {
        this.finish(sub, true);
        return;
      }
      if (m.wallMs + lag > now) {
        this.wake(sub, m.wallMs + lag - now);
        return;
      }
      sub.next++;
      const ok = sub.call.write(encodeMessage(m));
      if (sub.remaining > 0 && --sub.remaining === 0) {
        this.finish(sub, true);
        return;
      }
      if (!ok) {
        sub.waitingDrain = true;
        sub.call.once('drain', () => {
          sub.waitingDrain = false;
          this.pump(sub);
        });
        return;
      }
    }
    if (sub.endNs !== null) {
      // Everything before the end time is out once the mirror's view of "now" passes it.
      const visibleNs = nowNs() - BigInt(lag) * 1_000_000n;
      if (visibleNs >= sub.endNs) {
        this.finish(sub, true);
        return;
      }
      this.wake(sub, Number((sub.endNs - visibleNs) / 1_000_000n) + 1);
    }
  }

  private wake(sub: Subscription, ms: number): void {
    if (sub.timer) return;
    // Node turns delays above 2^31−1 ms into 1 ms: a far end time would spin instead of sleeping.
    sub.timer = setTimeout(
      () => {
        sub.timer = undefined;
        this.pump(sub);
      },
      Math.min(Math.max(1, ms), MAX_TIMER_MS),
    );
  }

  private finish(sub: Subscription, complete: boolean): void {
    if (sub.done) return;
    sub.done = true;
    if (sub.timer) clearTimeout(sub.timer);
    this.byTopic.get(sub.topic.num)?.delete(sub);
    if (complete) sub.call.end();
  }

  closeAll(): void {
    for (const set of this.byTopic.values()) {
      for (const sub of set) {
        this.finish(sub, false);
        sub.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'local node stopped' });
      }
    }
    this.byTopic.clear();
  }
}

export interface MirrorGrpcDeps {
  streams: TopicStreams;
  faults: FaultPlan;
  /** The address book: every consensus node, running or not (as a real mirror lists them). */
  consensusEndpoints(): Array<{ accountNum: number; host: string; port: number }>;
}

export function createMirrorGrpcServer(deps: MirrorGrpcDeps): grpc.Server {
  const server = newServer();
  const faultFor = (path: string, call: grpc.ServerWritableStream<Buffer, Buffer>): boolean => {
    const fault = deps.faults.take(path, ['grpc']);
    if (fault?.kind === 'grpc')
      call.emit('error', { code: fault.code, details: 'fault injected by the local node emulator' });
    return fault?.kind === 'grpc';
  };
  server.addService(
    { subscribeTopic: rawMethod(SUBSCRIBE_PATH, 'subscribeTopic', true) },
    {
      subscribeTopic: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
        if (!faultFor(SUBSCRIBE_PATH, call)) deps.streams.open(call);
      },
    },
  );
  server.addService(
    { getNodes: rawMethod(GET_NODES_PATH, 'getNodes', true) },
    {
      getNodes: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
        if (faultFor(GET_NODES_PATH, call)) return;
        for (const [i, { accountNum, host, port }] of deps.consensusEndpoints().entries()) {
          const ip = /^\d+\.\d+\.\d+\.\d+$/.test(host)
            ? Buffer.from(host.split('.').map(Number))
            : Buffer.from([127, 0, 0, 1]);
          const node: proto.INodeAddress = {
            nodeId: toLong(i),
            nodeAccountId: accountIdProto(accountNum),
            description: 'hcs25 local node emulator',
            serviceEndpoint: [{ ipAddressV4: ip, port }],
          };
          call.write(Buffer.from(proto.NodeAddress.encode(node).finish()));
        }
        call.end();
      },
    },
  );
  return server;
}
