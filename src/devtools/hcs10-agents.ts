/**
 * Sample HCS-10 agents for tests and the demo, living on a local node (the emulator or hiero-local-node). Each has
 * its own account and key (in memory only), inbound/outbound topics, an HCS-11 profile on HCS-1, and polls the
 * mirror node like real HCS-10 agents do:
 * - `correct`: answers with the bare answer (the transports' "perfect" solver),
 * - `silent`: accepts connections, never answers,
 * - `large`: answers correctly, but as an HCS-1 file (`data: "hcs://1/…"`) padded past the inline limit,
 * and agents that talk before they answer, as agents built with the standards-sdk do (not in the default fleet):
 * - `greeting`: says hello on the connection right after `connection_created`, then answers bare,
 * - `late-greeting`: says hello (and "typing") only when the first question arrives, so both reach consensus after
 *   the question, then answers bare,
 * - `tagged`: the standards-sdk's sample agent: a greeting with the SDK's greeting memo sent when the first question
 *   arrives, and replies tagged `[Reply to #N] …` with memo "… response to message #N".
 * `startHcs10Fleet` starts them and lists them in an HCS-10 registry topic.
 */
import { AccountCreateTransaction, Hbar, KeyList, PrivateKey, PublicKey, type Client, type Key } from '@hashgraph/sdk';
import { Hcs25Error, errorMessage } from '../core/errors.js';
import { readHcs1File } from '../hedera/hcs1.js';
import { inscribeHcs1 } from '../hedera/hcs1-write.js';
import { MirrorRestClient } from '../hedera/mirror-rest.js';
import { createTopic, submitMessage } from '../hedera/tx.js';
import { provisionHcs10Agent, operatorIdOf, type Hcs10Identity } from '../hcs10/identity.js';
import {
  connectionCreatedOp,
  connectionTopicMemo,
  fitsInline,
  hcs1TopicOf,
  messageOp,
  outboundConnectionClosedOp,
  outboundConnectionCreatedOp,
  parseIncoming,
  parseOperatorId,
  registerOp,
  registryTopicMemo,
  type Hcs10Outgoing,
  type SubmittedOp,
} from '../hcs10/messages.js';
import { chainResolveContext } from '../discover/chain-resolve.js';
import { loadScienceBank, type ScienceBankEntry } from '../evaluate/science.js';
import type { AgentRecord } from '../discover/agent-record.js';
import { resolveAccountProfile } from '../discover/hcs11.js';
import { abortableSleep } from '../net/deadline.js';
import { bareAnswer, createSolver, type Solution } from './agents/solver.js';
import { scienceFacts } from './agents/fleet.js';

export const HCS10_BEHAVIOURS = ['correct', 'silent', 'large'] as const;
export const HCS10_CHATTY_BEHAVIOURS = ['greeting', 'late-greeting', 'tagged'] as const;
export type Hcs10Behaviour = (typeof HCS10_BEHAVIOURS)[number] | (typeof HCS10_CHATTY_BEHAVIOURS)[number];

/** A hello with numbers in it: graded as the answer, it would be wrong. */
export const SAMPLE_GREETING = "Hello! I'm a math agent. Try me: 12 + 30 = 42. Science questions too (answer A).";
/** The standards-sdk sample agent's greeting memo, and a greeting that only the memo gives away. */
export const SDK_GREETING_MEMO = 'Greeting message after connection established';
export const SDK_GREETING =
  "I'm Bob, your friendly Hedera agent! I solve math like 5 * (3 + 2) = 25. What would you like to do today?";

export interface Hcs10AgentOptions {
  behaviour: Hcs10Behaviour;
  name?: string;
  /** Pays for the agent's account (the local node's operator). */
  funder: Client;
  /** A client acting as the given account (LocalNode.client). */
  clientFor(operator: { accountId: string; privateKey: string }): Client;
  mirror: MirrorRestClient;
  solve: (prompt: string) => Solution;
  /** Mirror polling interval, ms. Default 250. */
  pollMs?: number;
  /** Size of a `large` agent's reply, bytes. Default 4096. */
  largeBytes?: number;
  /** Make the inbound topic HIP-991 fee-gated at this many hbar per message. */
  inboundFeeHbar?: number;
  initialBalanceHbar?: number;
  /** Told of every HCS-10 operation the agent submits (tests check memos with it). */
  onSubmitted?: (op: SubmittedOp) => void;
}

export interface Hcs10AgentStats {
  requests: number;
  connections: number;
  messages: number;
  replies: number;
  closed: number;
  errors: string[];
}

export interface RunningHcs10Agent {
  name: string;
  behaviour: Hcs10Behaviour;
  identity: Hcs10Identity;
  /** Agent record for a registry or the runner. */
  record: AgentRecord & { protocol: 'hcs-10' };
  stats: Hcs10AgentStats;
  stop(): Promise<void>;
}

interface Conversation {
  requesterAccountId: string;
  cursor: number;
  greeted: boolean;
}

export async function startHcs10Agent(options: Hcs10AgentOptions): Promise<RunningHcs10Agent> {
  const name = options.name ?? `hcs10-${options.behaviour}`;
  const key = PrivateKey.generateED25519();
  let accountId: string;
  try {
    const receipt = await (
      await new AccountCreateTransaction()
        .setKeyWithoutAlias(key.publicKey)
        .setInitialBalance(new Hbar(options.initialBalanceHbar ?? 100))
        .execute(options.funder)
    ).getReceipt(options.funder);
    accountId = receipt.accountId!.toString();
  } catch (err) {
    throw new Hcs25Error('DEMO', `creating the account of sample agent ${name} failed: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  const client = options.clientFor({ accountId, privateKey: key.toStringDer() });
  try {
    const { identity } = await provisionHcs10Agent(client, {
      displayName: name,
      alias: name,
      bio: `hcs25 sample agent (${options.behaviour})`,
      model: 'hcs25-solver',
      creator: 'hcs25',
      capabilities: [0, 7],
      ...(options.inboundFeeHbar !== undefined && {
        inbound: {
          fees: [{ collectorAccountId: accountId, tinybars: Math.round(options.inboundFeeHbar * 1e8) }],
          feeScheduleKey: key.publicKey,
        },
      }),
    });
    await visibleOnMirror(options.mirror, identity.inboundTopicId, name);
    const agent = new SampleAgent(name, options, client, key.publicKey, identity);
    agent.start();
    return {
      name,
      behaviour: options.behaviour,
      identity,
      record: { name, protocol: 'hcs-10', accountId, inboundTopicId: identity.inboundTopicId },
      stats: agent.stats,
      stop: () => agent.stop(),
    };
  } catch (err) {
    client.close();
    throw err;
  }
}

/** How long a new sample agent waits for the mirror node to show its inbound topic. */
const MIRROR_VISIBLE_MS = 30_000;

/**
 * A registered agent's inbound topic is on the mirror node before anyone discovers it; a sample agent starts the same
 * way, so that a requester asking it at once does not meet the mirror's lag (it would read "no such topic").
 */
async function visibleOnMirror(mirror: MirrorRestClient, topicId: string, name: string): Promise<void> {
  const deadline = Date.now() + MIRROR_VISIBLE_MS;
  while ((await mirror.getTopic(topicId)) === null) {
    if (Date.now() > deadline)
      throw new Hcs25Error(
        'DEMO',
        `sample agent ${name}: the mirror node did not show its inbound topic ${topicId} within ${MIRROR_VISIBLE_MS / 1000} s`,
      );
    await abortableSleep(50);
  }
}

class SampleAgent {
  readonly stats: Hcs10AgentStats = { requests: 0, connections: 0, messages: 0, replies: 0, closed: 0, errors: [] };
  private readonly conversations = new Map<string, Conversation>();
  private inboundCursor = 0;
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly operatorId: string;

  constructor(
    private readonly name: string,
    private readonly options: Hcs10AgentOptions,
    private readonly client: Client,
    private readonly publicKey: PublicKey,
    private readonly identity: Hcs10Identity,
  ) {
    this.operatorId = operatorIdOf(identity);
  }

  start(): void {
    this.loop = (async () => {
      while (!this.halt.signal.aborted) {
        try {
          await this.tick();
        } catch (err) {
          if (this.halt.signal.aborted) break;
          if (this.stats.errors.length < 20) this.stats.errors.push(errorMessage(err));
        }
        await abortableSleep(this.options.pollMs ?? 250, this.halt.signal).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.halt.abort();
    await this.loop;
    this.client.close();
  }

  private async tick(): Promise<void> {
    const { mirror } = this.options;
    const signal = this.halt.signal;
    for await (const msg of mirror.topicMessages(this.identity.inboundTopicId, {
      afterSequence: this.inboundCursor,
      signal,
    })) {
      this.inboundCursor = msg.sequenceNumber;
      const parsed = parseIncoming(msg.message);
      if (parsed.ok && parsed.op.op === 'connection_request')
        await this.accept(msg.sequenceNumber, parsed.op.operator_id);
    }
    for (const [topicId, conversation] of this.conversations) {
      for await (const msg of mirror.topicMessages(topicId, { afterSequence: conversation.cursor, signal })) {
        conversation.cursor = msg.sequenceNumber;
        const parsed = parseIncoming(msg.message);
        if (!parsed.ok) continue;
        const from =
          parsed.op.operator_id === undefined ? undefined : parseOperatorId(parsed.op.operator_id)?.accountId;
        if (from !== conversation.requesterAccountId) continue;
        if (parsed.op.op === 'close_connection') {
          this.conversations.delete(topicId);
          this.stats.closed++;
          await this.send(
            this.identity.outboundTopicId,
            outboundConnectionClosedOp({
              connectionTopicId: topicId,
              operatorId: this.operatorId,
              reason: 'closed by the requester',
            }),
          );
          break;
        }
        if (parsed.op.op === 'message') {
          this.stats.messages++;
          await this.answer(topicId, conversation, parsed.op.data, msg.sequenceNumber);
        }
      }
    }
  }

  /** A connection request: a topic both sides can write to, then `connection_created` on our inbound topic. */
  private async accept(requestSeq: number, requesterOperatorId: string): Promise<void> {
    this.stats.requests++;
    const requester = parseOperatorId(requesterOperatorId);
    if (!requester) return;
    const requesterKey = await this.accountKey(requester.accountId);
    const submitKey: Key | undefined = requesterKey ? new KeyList([this.publicKey, requesterKey], 1) : undefined;
    const topicId = await createTopic(this.client, {
      memo: connectionTopicMemo(this.identity.inboundTopicId, requestSeq),
      ...(submitKey && { submitKey }),
    });
    const conversation: Conversation = { requesterAccountId: requester.accountId, cursor: 0, greeted: false };
    this.conversations.set(topicId, conversation);
    const confirmedSeq = await this.send(
      this.identity.inboundTopicId,
      connectionCreatedOp({
        connectionTopicId: topicId,
        connectedAccountId: requester.accountId,
        operatorId: this.operatorId,
        connectionId: requestSeq,
        m: 'Connection established.',
      }),
    );
    this.stats.connections++;
    if (this.options.behaviour === 'greeting') await this.greet(topicId, conversation);
    const requestorOutbound = await this.outboundTopicOf(requester.accountId);
    if (requestorOutbound) {
      await this.send(
        this.identity.outboundTopicId,
        outboundConnectionCreatedOp({
          connectionTopicId: topicId,
          outboundTopicId: this.identity.outboundTopicId,
          requestorOutboundTopicId: requestorOutbound,
          confirmedRequestId: confirmedSeq,
          connectionRequestId: requestSeq,
          operatorId: this.operatorId,
        }),
      );
    }
  }

  private async greet(topicId: string, conversation: Conversation): Promise<void> {
    conversation.greeted = true;
    if (this.options.behaviour === 'tagged') {
      await this.send(topicId, messageOp({ operatorId: this.operatorId, data: SDK_GREETING, m: SDK_GREETING_MEMO }));
      return;
    }
    await this.send(topicId, messageOp({ operatorId: this.operatorId, data: SAMPLE_GREETING }));
    if (this.options.behaviour === 'late-greeting') {
      await this.send(
        topicId,
        messageOp({
          operatorId: this.operatorId,
          data: JSON.stringify({ type: 'typing', text: 'Working on 99 + 1…' }),
        }),
      );
    }
  }

  private async answer(topicId: string, conversation: Conversation, data: string, questionSeq: number): Promise<void> {
    const { behaviour } = this.options;
    if (behaviour === 'silent') return;
    if (!conversation.greeted && (behaviour === 'late-greeting' || behaviour === 'tagged'))
      await this.greet(topicId, conversation);
    const fileTopic = hcs1TopicOf(data);
    const prompt =
      fileTopic === null
        ? data
        : (await readHcs1File(this.options.mirror, fileTopic, { signal: this.halt.signal })).bytes.toString('utf8');
    const answer = bareAnswer(this.options.solve(prompt));
    let reply = answer;
    if (behaviour === 'large') reply = padded(answer, this.options.largeBytes ?? 4096);
    if (behaviour === 'tagged') reply = `[Reply to #${questionSeq}] ${answer}`;
    let payload = reply;
    if (this.options.behaviour === 'large' || !fitsInline(this.operatorId, reply)) {
      payload = (await inscribeHcs1(this.client, Buffer.from(reply, 'utf8'), { mimeType: 'text/plain' })).hrl;
    }
    const m =
      behaviour === 'tagged'
        ? `${this.name} response to message #${questionSeq}`
        : payload !== reply
          ? 'Large message stored via HCS-1'
          : undefined;
    await this.send(topicId, messageOp({ operatorId: this.operatorId, data: payload, ...(m !== undefined && { m }) }));
    this.stats.replies++;
  }

  private async send(topicId: string, op: Hcs10Outgoing): Promise<number> {
    const submitted = await submitMessage(this.client, topicId, op.body, op.memo);
    this.options.onSubmitted?.({ topicId, op: String(op.payload.op), memo: op.memo, ...submitted });
    return submitted.seq;
  }

  private async accountKey(accountId: string): Promise<PublicKey | undefined> {
    const account = await this.options.mirror.getAccount(accountId, this.halt.signal);
    const key = account?.key;
    try {
      if (key?._type === 'ED25519') return PublicKey.fromStringED25519(key.key);
      if (key?._type === 'ECDSA_SECP256K1') return PublicKey.fromStringECDSA(key.key);
    } catch {
      // An unreadable key: fall through to a public connection topic.
    }
    return undefined;
  }

  private async outboundTopicOf(accountId: string): Promise<string | undefined> {
    try {
      const profile = await resolveAccountProfile(
        accountId,
        chainResolveContext(this.options.mirror, { signal: this.halt.signal }),
      );
      const outbound = profile?.doc.outboundTopicId;
      return typeof outbound === 'string' ? outbound : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The answer first (graders read the first token), then filler with no digits and no capital letters A–D. */
function padded(answer: string, bytes: number): string {
  const filler = ' this reply is padded on purpose so that it travels as an hcs-1 file rather than inline.';
  let text = `${answer}\n\n`;
  while (Buffer.byteLength(text, 'utf8') < bytes) text += filler;
  return text;
}

// ---------- the fleet ----------

/** What the fleet needs of a local node (LocalNode from src/localnode satisfies it). */
export interface FleetNode {
  mirrorRestUrl: string;
  client(operator?: { accountId: string; privateKey: string }): Client;
}

export interface Hcs10FleetOptions {
  node: FleetNode;
  /** Register into this HCS-10 registry topic (its submit key must be the node operator's, or none). Default: create one. */
  registryTopicId?: string;
  /** Which agents (default one of each behaviour). */
  include?: readonly Hcs10Behaviour[];
  scienceBank?: readonly ScienceBankEntry[];
  pollMs?: number;
  largeBytes?: number;
  /** Also start a `correct` agent whose inbound topic charges this HIP-991 fee (hbar), registered as `hcs10-paid`. */
  paidAgentFeeHbar?: number;
  /** Told of every HCS-10 operation the agents and the registrar submit. */
  onSubmitted?: (op: SubmittedOp) => void;
}

export interface Hcs10Fleet {
  /** Agent records, as a registry lists them. */
  agents: Array<AgentRecord & { protocol: 'hcs-10' }>;
  running: RunningHcs10Agent[];
  registryTopicId: string;
  stop(): Promise<void>;
}

/**
 * Starts the sample HCS-10 agents and registers them (`register` ops, memo `hcs-10:op:0:0`) in an HCS-10 registry
 * topic (`hcs-10:0:60:3`, guarded by the node operator's submit key when the fleet creates it).
 */
export async function startHcs10Fleet(options: Hcs10FleetOptions): Promise<Hcs10Fleet> {
  const funder = options.node.client();
  const mirror = new MirrorRestClient({ baseUrl: options.node.mirrorRestUrl, timeoutMs: 5_000, retries: 2 });
  const solve = createSolver(scienceFacts(options.scienceBank ?? loadScienceBank()));
  const running: RunningHcs10Agent[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(running.map((a) => a.stop()));
    funder.close();
    await mirror.close();
  };
  try {
    const registryTopicId =
      options.registryTopicId ??
      (await createTopic(funder, { memo: registryTopicMemo(), submitKey: funder.operatorPublicKey! }));
    const specs: { behaviour: Hcs10Behaviour; name?: string; inboundFeeHbar?: number }[] = (
      options.include ?? HCS10_BEHAVIOURS
    ).map((behaviour) => ({ behaviour }));
    if (options.paidAgentFeeHbar !== undefined)
      specs.push({ behaviour: 'correct', name: 'hcs10-paid', inboundFeeHbar: options.paidAgentFeeHbar });
    const started = await Promise.all(
      specs.map((spec) =>
        startHcs10Agent({
          ...spec,
          funder,
          clientFor: (op) => options.node.client(op),
          mirror,
          solve,
          ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
          ...(options.largeBytes !== undefined && { largeBytes: options.largeBytes }),
          ...(options.onSubmitted && { onSubmitted: options.onSubmitted }),
        }).then((agent) => {
          running.push(agent);
          return agent;
        }),
      ),
    );
    // Registered one at a time, in spec order, so registry order (and uids) are stable.
    for (const agent of started) {
      const op = registerOp({
        accountId: agent.identity.accountId,
        inboundTopicId: agent.identity.inboundTopicId,
        m: `Registering ${agent.name}.`,
      });
      const submitted = await submitMessage(funder, registryTopicId, op.body, op.memo);
      options.onSubmitted?.({ topicId: registryTopicId, op: 'register', memo: op.memo, ...submitted });
    }
    let stopped: Promise<void> | undefined;
    return {
      agents: started.map((a) => a.record),
      running: started,
      registryTopicId,
      stop: () => (stopped ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
