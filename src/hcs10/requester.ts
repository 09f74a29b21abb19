/**
 * The requesting side of HCS-10, as the eval runner uses it: open a connection to an agent (connection request on
 * its inbound topic, wait for the `connection_created` whose `connection_id` is the request's sequence number),
 * send a message on the connection topic, take the agent's next message (resolving `hcs://1/` data), close.
 *
 * Reading is mirror polling with backoff; writing is consensus transactions with receipts. Everything waits under
 * the caller's AbortSignal (the ask's deadline). Problems are Hcs10AskError with the transport failure kind.
 */
import { formatHrl } from '../core/hrl.js';
import type { Client } from '@hashgraph/sdk';
import { errorMessage } from '../core/errors.js';
import { backoffDelay, retry } from '../core/retry.js';
import { Hcs1Error, readHcs1File } from '../hedera/hcs1.js';
import { inscribeHcs1 } from '../hedera/hcs1-write.js';
import { MirrorError, type MirrorRestClient, type TopicMessage } from '../hedera/mirror-rest.js';
import { LedgerTxError, hbarToTinybars, submitMessage, type Submitted } from '../hedera/tx.js';
import { abortableSleep } from '../net/deadline.js';
import { oneLine, preview } from '../core/terminal.js';
import { Hcs10AskError } from './ask-error.js';
import { operatorIdOf, type Hcs10Identity } from './identity.js';
import { classifyInbound, describeAccess } from './inbound.js';
import { classifyAgentMessage, replyTagOf } from './replies.js';
import {
  closeConnectionOp,
  connectionRequestOp,
  fitsInline,
  hcs1TopicOf,
  messageOp,
  outboundConnectionClosedOp,
  outboundConnectionRequestOp,
  parseHcs10TopicMemo,
  parseIncoming,
  type Hcs10Outgoing,
  type SubmittedOp,
} from './messages.js';

export { Hcs10AskError };

export interface PollOptions {
  /** First wait between mirror polls, ms. */
  minMs: number;
  /** Longest wait between polls, ms. */
  maxMs: number;
  /** Growth of the wait after each empty poll. */
  factor: number;
}

/** Public mirror nodes lag consensus by seconds and throttle; start at 0.5 s, back off to 5 s. */
export const DEFAULT_POLL: PollOptions = { minMs: 500, maxMs: 5_000, factor: 1.5 };

export interface TopicFeePolicy {
  /** Pay HIP-991 fees on fee-gated inbound topics at all. */
  allow: boolean;
  /** Most a single connection request may pay in topic fees, hbar. */
  maxHbar: number;
}

export interface RequesterOptions {
  /** Pays for and signs every message; its operator is `identity.accountId`. */
  client: Client;
  identity: Hcs10Identity;
  mirror: MirrorRestClient;
  poll?: Partial<PollOptions>;
  topicFees?: TopicFeePolicy;
  /** Log requests and closes on our outbound topic, as HCS-10 asks. Default true. */
  recordOutbound?: boolean;
  /** Largest reply accepted (inline or HCS-1), bytes. Default 64 KiB. */
  maxReplyBytes?: number;
  /** The `m` of our connection requests. */
  requestMemo?: string;
  /** Told of every HCS-10 operation submitted (fee accounting, audits). */
  onSubmitted?: (op: SubmittedOp) => void;
}

export interface Hcs10Target {
  accountId: string;
  inboundTopicId: string;
}

export interface Hcs10Connection {
  topicId: string;
  /** Sequence number of our request on the agent's inbound topic (the connection id). */
  connectionId: number;
  /** Sequence number of the agent's `connection_created`. */
  confirmedSeq: number;
  /** HIP-991 fee paid for the request, tinybars. */
  feeTinybars: number;
}

export interface Hcs10Reply {
  text: string;
  /** Sequence numbers of our message and the agent's reply on the connection topic. */
  messageSeq: number;
  replySeq: number;
  /** Set when the reply (or our prompt) went through an HCS-1 file. */
  replyHrl?: string;
  promptHrl?: string;
}

export const DEFAULT_MAX_REPLY_BYTES = 64 * 1024;

interface Heard {
  /** Last sequence number read on the connection topic. */
  cursor: number;
  /** The agent has sent a message on the connection (so a later hello is not its greeting). */
  agentSpoke: boolean;
  /** The agent tags its replies with our message's sequence number. */
  tagsReplies: boolean;
}

export class Hcs10Requester {
  private readonly poll: PollOptions;
  private readonly operatorId: string;
  private readonly ourKeyHex: string | undefined;
  /** Outbound-topic records run beside the conversation; close() waits for them. */
  private readonly background = new Set<Promise<unknown>>();
  /** Per connection topic: how far it has been read, and what the agent has shown of its manners there. */
  private readonly heard = new Map<string, Heard>();

  constructor(
    private readonly target: Hcs10Target,
    private readonly options: RequesterOptions,
  ) {
    this.poll = { ...DEFAULT_POLL, ...options.poll };
    this.operatorId = operatorIdOf(options.identity);
    this.ourKeyHex = options.client.operatorPublicKey?.toStringRaw();
  }

  async connect(signal: AbortSignal): Promise<Hcs10Connection> {
    const { mirror } = this.options;
    const inbound = this.target.inboundTopicId;
    const topic = await this.mirrorCall(() => mirror.getTopic(inbound, signal));
    if (topic === null || topic.deleted) throw new Hcs10AskError('refused', `inbound topic ${inbound} does not exist`);
    const memo = parseHcs10TopicMemo(topic.memo);
    if (memo?.type !== 'inbound' || memo.accountId !== this.target.accountId) {
      throw new Hcs10AskError(
        'protocol-error',
        `topic ${inbound} is not the HCS-10 inbound topic of ${this.target.accountId} (memo ${preview(topic.memo, 60)})`,
      );
    }
    const access = classifyInbound(topic, this.ourKeyHex);
    let feeTinybars = 0;
    if (access.kind === 'controlled' && !access.ours) {
      throw new Hcs10AskError(
        'auth-required',
        `${describeAccess(access)}: only its key holders can request a connection`,
      );
    }
    if (access.kind === 'fee') {
      const policy = this.options.topicFees;
      if (access.tokenFees > 0)
        throw new Hcs10AskError('auth-required', `${describeAccess(access)}: token fees are not paid`);
      if (!policy?.allow)
        throw new Hcs10AskError('auth-required', `${describeAccess(access)}; not paid without --allow-topic-fees`);
      if (access.hbarTinybars > hbarToTinybars(policy.maxHbar)) {
        throw new Hcs10AskError(
          'auth-required',
          `${describeAccess(access)} is above the cap of ${policy.maxHbar} ℏ per request`,
        );
      }
      feeTinybars = access.hbarTinybars;
    }

    const request = connectionRequestOp({ operatorId: this.operatorId, m: this.options.requestMemo ?? 'hcs25 eval' });
    const connectionId = (await this.submit(inbound, request, signal, feeTinybars)).seq;
    this.record(() =>
      outboundConnectionRequestOp({
        operatorId: `${inbound}@${this.target.accountId}`,
        outboundTopicId: this.options.identity.outboundTopicId,
        connectionRequestId: connectionId,
        m: 'hcs25 eval',
      }),
    );

    let cursor = connectionId;
    const created = await this.pollFor(signal, async () => {
      for await (const msg of mirror.topicMessages(inbound, { afterSequence: cursor, signal })) {
        cursor = msg.sequenceNumber;
        const parsed = parseIncoming(msg.message);
        if (!parsed.ok || parsed.op.op !== 'connection_created' || parsed.op.connection_id !== connectionId) continue;
        if (!this.fromAgent(msg)) continue;
        return { topicId: parsed.op.connection_topic_id, confirmedSeq: msg.sequenceNumber };
      }
      return undefined;
    });
    return { ...created, connectionId, feeTinybars };
  }

  /**
   * Sends `prompt` and waits for the agent's reply to it: a message the agent paid for, after our question in
   * consensus order (sequence numbers on one topic), that is tagged as the reply to our message or is the agent's
   * first untagged word after it. Greetings, status notices and replies to other messages are set aside (see
   * hcs10/replies.ts); what the agent said before our question only tells us it has already greeted.
   */
  async ask(connection: Hcs10Connection, prompt: string, signal: AbortSignal): Promise<Hcs10Reply> {
    const { client, mirror } = this.options;
    let data = prompt;
    let promptHrl: string | undefined;
    if (!fitsInline(this.operatorId, prompt)) {
      promptHrl = (
        await this.chain(() => inscribeHcs1(client, Buffer.from(prompt, 'utf8'), { mimeType: 'text/plain' }), signal)
      ).hrl;
      data = promptHrl;
    }
    const messageSeq = (await this.submit(connection.topicId, messageOp({ operatorId: this.operatorId, data }), signal))
      .seq;
    const heard = this.heardOn(connection.topicId);
    const found = await this.pollFor(signal, async () => {
      for await (const msg of mirror.topicMessages(connection.topicId, { afterSequence: heard.cursor, signal })) {
        heard.cursor = msg.sequenceNumber;
        const parsed = parseIncoming(msg.message);
        if (!parsed.ok || !this.fromAgent(msg)) continue;
        const op = parsed.op;
        const afterQuestion = msg.sequenceNumber > messageSeq;
        if (op.op === 'close_connection' && afterQuestion) {
          throw new Hcs10AskError(
            'refused',
            `the agent closed the connection${op.reason ? `: ${oneLine(op.reason, 100)}` : ''}`,
          );
        }
        if (op.op !== 'message') continue;
        if (!afterQuestion) {
          // A greeting (or a late answer to an earlier question) that reached consensus before our question.
          heard.agentSpoke = true;
          if (replyTagOf(op.data, op.m)) heard.tagsReplies = true;
          continue;
        }
        const file = hcs1TopicOf(op.data);
        const content = file === null ? op.data : await this.readFile(file, signal);
        const verdict = classifyAgentMessage(content, op.m, {
          questionSeq: messageSeq,
          firstFromAgent: !heard.agentSpoke,
          tagsReplies: heard.tagsReplies,
        });
        heard.agentSpoke = true;
        if (verdict.repliesTo !== undefined) heard.tagsReplies = true;
        if (verdict.kind !== 'answer') continue;
        // The SDK inscribes the whole tagged text; a tag in front of an HRL points at the reply's file instead.
        const inner = file === null ? hcs1TopicOf(verdict.text) : null;
        const text = inner === null ? verdict.text : await this.readFile(inner, signal);
        const replyFile = file ?? inner;
        return { text, replySeq: msg.sequenceNumber, ...(replyFile !== null && { replyHrl: formatHrl(1, replyFile) }) };
      }
      return undefined;
    });
    const maxBytes = this.options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    if (Buffer.byteLength(found.text, 'utf8') > maxBytes)
      throw new Hcs10AskError('too-large', `the reply is larger than ${maxBytes} bytes`);
    return {
      text: replyText(found.text),
      messageSeq,
      replySeq: found.replySeq,
      ...(found.replyHrl !== undefined && { replyHrl: found.replyHrl }),
      ...(promptHrl !== undefined && { promptHrl }),
    };
  }

  /** Ends the conversation (close_connection + our outbound record) and waits for pending records. Never throws. */
  async close(connection: Hcs10Connection | undefined, reason = 'evaluation finished'): Promise<void> {
    if (connection) {
      const signal = AbortSignal.timeout(30_000);
      try {
        await this.submit(connection.topicId, closeConnectionOp({ operatorId: this.operatorId, reason }), signal);
        this.record(() =>
          outboundConnectionClosedOp({ connectionTopicId: connection.topicId, operatorId: this.operatorId, reason }),
        );
      } catch {
        // The agent may have deleted or locked the topic already; nothing to do about it.
      }
    }
    await Promise.allSettled([...this.background]);
  }

  // ---------- plumbing ----------

  private heardOn(topicId: string): Heard {
    let heard = this.heard.get(topicId);
    if (!heard) {
      heard = { cursor: 0, agentSpoke: false, tagsReplies: false };
      this.heard.set(topicId, heard);
    }
    return heard;
  }

  /**
   * A message is the agent's only when the mirror node says the agent's account paid for it. `operator_id` is
   * self-declared: on a public inbound topic anyone could forge a `connection_created` pointing at a topic they
   * control and answer in the agent's name, inflating its score.
   */
  private fromAgent(msg: TopicMessage): boolean {
    return msg.payerAccountId === this.target.accountId;
  }

  private record(build: () => Hcs10Outgoing): void {
    if (this.options.recordOutbound === false) return;
    const op = build();
    const topicId = this.options.identity.outboundTopicId;
    const p = submitMessage(this.options.client, topicId, op.body, op.memo).then(
      (s) => this.told(topicId, op, s),
      () => undefined,
    );
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }

  private async submit(topicId: string, op: Hcs10Outgoing, signal: AbortSignal, feeTinybars = 0): Promise<Submitted> {
    const submitted = await this.chain(
      () =>
        submitMessage(
          this.options.client,
          topicId,
          op.body,
          op.memo,
          feeTinybars > 0 ? { maxCustomFeeTinybars: feeTinybars } : {},
        ),
      signal,
    );
    this.told(topicId, op, submitted, feeTinybars);
    return submitted;
  }

  private told(topicId: string, op: Hcs10Outgoing, submitted: Submitted, topicFeeTinybars = 0): void {
    this.options.onSubmitted?.({
      topicId,
      op: String(op.payload.op),
      memo: op.memo,
      ...submitted,
      ...(topicFeeTinybars > 0 && { topicFeeTinybars }),
    });
  }

  /** A consensus call raced against the deadline (the SDK takes no signal; a late transaction is harmless). */
  private async chain<T>(fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    try {
      return await raceAbort(fn(), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      if (err instanceof LedgerTxError && /INVALID_TOPIC_ID|TOPIC_EXPIRED/.test(err.message)) {
        throw new Hcs10AskError('refused', `the agent's topic is gone: ${errorMessage(err)}`);
      }
      if (err instanceof LedgerTxError && /INVALID_SIGNATURE/.test(err.message)) {
        throw new Hcs10AskError(
          'auth-required',
          `the agent's topic does not accept our messages: ${errorMessage(err)}`,
        );
      }
      throw new Hcs10AskError('protocol-error', errorMessage(err), true);
    }
  }

  private async mirrorCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof MirrorError)
        throw new Hcs10AskError('protocol-error', err.message, err.code === 'MIRROR_UNAVAILABLE');
      throw err;
    }
  }

  private async pollFor<T>(signal: AbortSignal, read: () => Promise<T | undefined>): Promise<T> {
    const schedule = { minMs: this.poll.minMs, maxMs: this.poll.maxMs, factor: this.poll.factor };
    for (let attempt = 0; ; attempt++) {
      const found = await this.mirrorCall(read);
      if (found !== undefined) return found;
      await abortableSleep(backoffDelay(attempt, schedule), signal);
    }
  }

  /** An HCS-1 reply. The file precedes the message at consensus, but a lagging mirror may show it late: retry a little. */
  private async readFile(topicId: string, signal: AbortSignal): Promise<string> {
    const maxBytes = this.options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    const tooLarge = (err: unknown): boolean =>
      err instanceof Hcs1Error && /larger than|decompresses to more/.test(err.message);
    try {
      const file = await retry(() => readHcs1File(this.options.mirror, topicId, { maxBytes, signal }), {
        attempts: 5,
        minMs: this.poll.minMs,
        maxMs: Number.POSITIVE_INFINITY,
        signal,
        retryable: (err) => !signal.aborted && !tooLarge(err),
      });
      return file.bytes.toString('utf8');
    } catch (err) {
      if (signal.aborted) throw err;
      if (tooLarge(err))
        throw new Hcs10AskError('too-large', `the reply file hcs://1/${topicId} is larger than ${maxBytes} bytes`);
      throw new Hcs10AskError('protocol-error', `the reply hcs://1/${topicId} is unreadable: ${errorMessage(err)}`);
    }
  }
}

/** `data` may be JSON carrying the text (`{"content":"…"}`, as in HCS-10's structured example); else it is the text. */
export function replyText(data: string): string {
  const trimmed = data.trim();
  if (!trimmed.startsWith('{')) return data;
  try {
    const doc = JSON.parse(trimmed) as Record<string, unknown>;
    for (const key of ['content', 'text', 'message', 'response', 'answer']) {
      const v = doc[key];
      if (typeof v === 'string') return v;
    }
  } catch {
    // not JSON after all
  }
  return data;
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
