/**
 * HCS-10 transport: asks an agent over Hedera Consensus Service (see src/hcs10/requester.ts for the protocol).
 * One connection per agent, opened on the first ask and reused for the rest (asks are serialised: HCS-10 has no
 * reply field, and only some agents tag replies with our message's sequence number; see hcs10/replies.ts); a
 * connection whose ask timed out is dropped, so an untagged late answer cannot be read as the next one's.
 * `close()` sends `close_connection`.
 *
 * Budget: HCS-10 asks use this transport's own budget (default 120 s: consensus, mirror lag and agent polling add
 * up to tens of seconds), not the runner's per-ask budget, which is sized for HTTP. Pass `budgetMs` to change it.
 * The caller's AbortSignal still cuts an ask short.
 */
import { errorMessage } from '../../core/errors.js';
import { classifyInbound, describeAccess } from '../../hcs10/inbound.js';
import { parseHcs10TopicMemo } from '../../hcs10/messages.js';
import { chainResolveContext } from '../../discover/chain-resolve.js';
import { Hcs10AskError } from '../../hcs10/ask-error.js';
import type { Hcs10Connection, Hcs10Requester, Hcs10Target, RequesterOptions } from '../../hcs10/requester.js';
import { resolveAccountProfile } from '../../discover/hcs11.js';
import type { MetadataFetch } from '../../discover/fetch-metadata.js';
import type { ResolveContext } from '../../discover/resolve.js';
import type { Agent } from '../../core/agent.js';
import { Deadline } from '../../net/deadline.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';

export const DEFAULT_HCS10_BUDGET_MS = 120_000;

/** The requester's options (client, identity, mirror, poll, topicFees, recordOutbound, maxReplyBytes, onSubmitted) plus: */
export interface Hcs10TransportOptions extends RequesterOptions {
  /** Budget of one ask, connection set-up included, ms. Default 120 000. */
  budgetMs?: number;
  /** Send close_connection on close(). Default true. */
  closeOnFinish?: boolean;
  /** For profiles stored off-chain (https, ipfs); HCS-1 profiles need only the mirror. Default: refuse. */
  fetch?: MetadataFetch;
  ipfsGateway?: string;
}

export function createHcs10Transport(agent: Agent, options: Hcs10TransportOptions): Transport {
  return new Hcs10Transport(agent, options);
}

type Phase = 'connect' | 'reply';

export class Hcs10Transport implements Transport {
  readonly protocol = 'hcs-10' as const;
  readonly canAsk = true;
  private readonly budgetMs: number;
  private target: Promise<Hcs10Target> | undefined;
  private requester: Hcs10Requester | undefined;
  private connection: Hcs10Connection | undefined;
  /** Asks run one after another on the one connection. */
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly agent: Agent,
    private readonly options: Hcs10TransportOptions,
  ) {
    this.budgetMs = options.budgetMs ?? DEFAULT_HCS10_BUDGET_MS;
  }

  ask(prompt: string, options: AskOptions): Promise<AskResult> {
    const run = this.queue.then(() => this.askNow(prompt, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async askNow(prompt: string, options: AskOptions): Promise<AskResult> {
    const deadline = new Deadline(this.budgetMs, options.signal);
    let phase: Phase = 'connect';
    const reused = this.connection !== undefined;
    try {
      if (this.closed) throw new Hcs10AskError('refused', 'the transport is closed');
      const requester = await this.requesterFor(deadline.signal);
      this.connection ??= await requester.connect(deadline.signal);
      const connection = this.connection;
      phase = 'reply';
      const reply = await requester.ask(connection, prompt, deadline.signal);
      return {
        ok: true,
        text: reply.text,
        latencyMs: deadline.elapsed(),
        meta: {
          connectionTopicId: connection.topicId,
          connectionId: connection.connectionId,
          reusedConnection: reused,
          messageSeq: reply.messageSeq,
          replySeq: reply.replySeq,
          ...(reply.replyHrl && { replyHrl: reply.replyHrl }),
          ...(reply.promptHrl && { promptHrl: reply.promptHrl }),
          ...(!reused && connection.feeTinybars > 0 && { topicFeeTinybars: connection.feeTinybars }),
        },
      };
    } catch (err) {
      // A connection whose ask failed may still deliver the late answer; never read it as the next question's.
      if (phase === 'reply') this.connection = undefined;
      return this.failure(err, deadline, phase);
    } finally {
      deadline.dispose();
    }
  }

  async probe(options: AskOptions): Promise<ProbeResult> {
    const deadline = new Deadline(Math.min(this.budgetMs, options.budgetMs), options.signal);
    const done = (reachable: boolean, reason: string): ProbeResult => ({
      reachable,
      latencyMs: deadline.elapsed(),
      reason,
    });
    try {
      const accountId = this.agent.accountId;
      let inbound = this.agent.inboundTopicId;
      if (accountId !== undefined) {
        const profile = await resolveAccountProfile(accountId, this.resolveContext(deadline.signal));
        if (profile !== null) {
          const fromProfile = profile.doc.inboundTopicId;
          if (typeof fromProfile !== 'string')
            return done(false, `the HCS-11 profile of ${accountId} has no inboundTopicId`);
          inbound = fromProfile;
        } else if (inbound === undefined) {
          // Without a profile, the inbound topic its registration named (as discovery and ask() use) is probed.
          return done(false, `account ${accountId} has no HCS-11 profile (memo hcs-11:…)`);
        }
      }
      if (inbound === undefined) return done(false, 'the agent has neither an account nor an inbound topic');
      const topic = await this.options.mirror.getTopic(inbound, deadline.signal);
      if (topic === null || topic.deleted) return done(false, `inbound topic ${inbound} does not exist`);
      const memo = parseHcs10TopicMemo(topic.memo);
      if (memo?.type !== 'inbound' || (accountId !== undefined && memo.accountId !== accountId)) {
        return done(false, `topic ${inbound} is not the HCS-10 inbound topic of ${accountId ?? 'the agent'}`);
      }
      const access = classifyInbound(topic, this.options.client.operatorPublicKey?.toStringRaw());
      const open = access.kind !== 'controlled' || access.ours;
      return done(open, describeAccess(access));
    } catch (err) {
      if (deadline.timedOut)
        return done(false, `timeout: no answer from the mirror node within ${deadline.budgetMs} ms`);
      return done(false, errorMessage(err));
    } finally {
      deadline.dispose();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    const connection = this.connection;
    this.connection = undefined;
    await this.requester?.close(this.options.closeOnFinish === false ? undefined : connection);
  }

  // ---------- plumbing ----------

  private async requesterFor(signal: AbortSignal): Promise<Hcs10Requester> {
    if (this.requester) return this.requester;
    this.target ??= this.resolveTarget(signal);
    let target: Hcs10Target;
    try {
      target = await this.target;
    } catch (err) {
      this.target = undefined;
      throw err;
    }
    const {
      budgetMs: _budget,
      closeOnFinish: _close,
      fetch: _fetch,
      ipfsGateway: _gateway,
      ...requesterOptions
    } = this.options;
    // Loaded on first use: it brings in the Hedera SDK, which the other transports (and `createTransport`) do not need.
    const { Hcs10Requester } = await import('../../hcs10/requester.js');
    this.requester = new Hcs10Requester(target, requesterOptions);
    return this.requester;
  }

  /** Account and inbound topic: from the agent record, filled in from the profile or the inbound memo when missing. */
  private async resolveTarget(signal: AbortSignal): Promise<Hcs10Target> {
    let { accountId, inboundTopicId } = this.agent;
    if (inboundTopicId === undefined && accountId !== undefined) {
      const profile = await resolveAccountProfile(accountId, this.resolveContext(signal));
      const fromProfile = profile?.doc.inboundTopicId;
      if (typeof fromProfile !== 'string')
        throw new Hcs10AskError('protocol-error', `account ${accountId} has no HCS-11 profile with an inboundTopicId`);
      inboundTopicId = fromProfile;
    }
    if (inboundTopicId === undefined)
      throw new Hcs10AskError('protocol-error', 'the agent has neither an account nor an inbound topic');
    if (accountId === undefined) {
      const topic = await this.options.mirror.getTopic(inboundTopicId, signal);
      const memo = topic === null ? null : parseHcs10TopicMemo(topic.memo);
      if (memo?.type !== 'inbound')
        throw new Hcs10AskError('refused', `topic ${inboundTopicId} is not an HCS-10 inbound topic`);
      accountId = memo.accountId;
    }
    return { accountId, inboundTopicId };
  }

  private resolveContext(signal: AbortSignal): ResolveContext {
    const { mirror, fetch, ipfsGateway } = this.options;
    return chainResolveContext(mirror, { signal, ...(fetch && { fetch }), ...(ipfsGateway && { ipfsGateway }) });
  }

  private failure(err: unknown, deadline: Deadline, phase: Phase): AskResult {
    const latencyMs = deadline.elapsed();
    if (deadline.timedOut) {
      const waitingFor = phase === 'connect' ? 'no connection_created' : 'no reply';
      return {
        ok: false,
        kind: 'timeout',
        message: `${waitingFor} within ${deadline.budgetMs} ms`,
        transient: false,
        latencyMs,
      };
    }
    if (deadline.callerAborted)
      return { ok: false, kind: 'timeout', message: 'aborted by the caller', transient: false, latencyMs };
    if (err instanceof Hcs10AskError)
      return { ok: false, kind: err.kind, message: err.message, transient: err.transient, latencyMs };
    return { ok: false, kind: 'protocol-error', message: errorMessage(err).slice(0, 300), transient: false, latencyMs };
  }
}
