/**
 * Publishes computed scores as format-3 score records (format/score-v3.ts; transaction memo `hcs25-tool/3:score`),
 * each naming its evidence, pipelined and exactly once, as signals are: the records are packed into messages
 * (`--pack`: `json` batches as many as fit in a readable op `scores` message, `dense` the same deflated and wrapped
 * as op `zlib`, `subject`/`none` one op `score` record per message), and every message is journaled (a publication
 * journal in the runs folder, one `scores` record per message: its exact bytes and the subjects of its records)
 * before the submitter gives it a pre-set transaction id, so a crash and `--resume` resend the journaled bytes under
 * the journaled ids, never a second copy (a v2 publication resumed finishes in v2).
 */
import { inflateSync } from 'node:zlib';
import { ulid } from 'ulid';
import type { Hcs25Client } from '../client.js';
import { MessageTooLargeError, UsageError } from '../core/errors.js';
import { parsePrivateKey } from '../hedera/client.js';
import { FeeCapError, estimateSubmitFee, formatHbar, hbarToTinybar } from '../publish/fees.js';
import {
  JOURNAL_VERSION,
  Journal,
  SCORE_KEY_PREFIX,
  emptyRunState,
  packBytes,
  packData,
  type RunState,
  type ScoreState,
  type StartRecord,
} from '../publish/journal.js';
import { operatorSigner } from '../publish/signer.js';
import { SubmitError } from '../publish/send-failure.js';
import { Submitter, type SubmitOutcome, type SubmitterOptions } from '../publish/submitter.js';
import { encodeRunKey, newRunKey } from '../format/hashing.js';
import { type BuiltMessage, TRANSACTION_MEMOS, ZLIB_FIRST_BYTE } from '../format/protocol.js';
import { type PackMode, ScorePacker, batchRecords, type PackedScores } from '../format/pack.js';
import { buildScoreMessageV2 } from '../format/write.js';
import type { ScoreExplanation, ScoreMessageV2 } from '../format/schema-v2.js';
import { FORMAT_ID_V3, TRANSACTION_MEMOS_V3 } from '../format/schema-v3.js';
import {
  ScorePackerV3,
  buildScoreMessageV3,
  expandScoresV3,
  type PackedScoresV3,
  type ScoresMessageV3,
} from '../format/score-v3.js';
import type { SubjectScore } from './scores.js';
import { scoreRecordV3For, type ScoreEvidenceSource } from './record-v3.js';

export interface PublishedScore {
  subject: string;
  transactionId: string;
  sequenceNumber: number;
  /** Place of the record in its message: 0 alone, k in a batch. (sequenceNumber, index) names it. */
  index: number;
  /** Size of the message that carries it. */
  bytes: number;
  /** The record carries its Score Explanation (false only for a subject id too long to leave room for it). */
  explained: boolean;
}

/**
 * The on-chain form of one subject's score: a v2 record (format/schema-v2.ts) whose explanation lists every applicable
 * adapter with its mode, weight, denominator membership, total and components. A subject id so long (≈ 270+
 * characters with the default config) that the explanation does not fit is published without it: a score nobody can
 * recompute beats no score, and `explained` says which it was. Throws if even that would not fit in one message.
 */
export function scoreMessageFor(s: SubjectScore): BuiltMessage<ScoreMessageV2> & { explained: boolean } {
  const input = {
    subject: s.subject,
    total: s.trustScores.total,
    trustScoreConfigVersion: s.trustScoreConfigVersion,
    trustScoreUpdatedAt: s.trustScoreUpdatedAt,
    trustConfidence: s.trustConfidence,
    explanation: explanationFor(s),
  };
  try {
    return { ...buildScoreMessageV2(input), explained: true };
  } catch (err) {
    if (!(err instanceof MessageTooLargeError)) throw err;
    return { ...buildScoreMessageV2(input, { explain: false }), explained: false };
  }
}

/** The Score Explanation of a computed score (component values before m_stale, as HCS-25 applies it). */
export function explanationFor(s: SubjectScore): ScoreExplanation {
  const components = Object.entries(s.components);
  return {
    configDigest: s.trustScoreConfigDigest,
    staleMultiplier: s.staleMultiplier,
    adapters: s.adapters
      .filter((a) => a.applicable)
      .map((a) => ({
        id: a.adapterId,
        mode: a.contributionMode,
        w: a.weight,
        in: a.inDenominator,
        t: a.total ?? 0,
        c: components
          .filter(([, c]) => c.adapterId === a.adapterId)
          .map(([k, c]) => ({ k, v: c.omitted ? null : (c.beforeStale ?? c.value), s: c.status })),
      })),
  };
}

/** The subjects' format-3 records packed into messages, in the subjects' order. */
export function packScoresV3(
  subjects: readonly SubjectScore[],
  source: ScoreEvidenceSource,
  mode: PackMode,
): PackedScoresV3[] {
  const packer = new ScorePackerV3(mode);
  const out: PackedScoresV3[] = [];
  for (const s of subjects) out.push(...packer.add(buildScoreMessageV3(scoreRecordV3For(s, source))));
  out.push(...packer.flush());
  return out;
}

/** The records of a message this publisher journaled (format 3, or v2 from a publication begun before it). */
function journaledRecords(bytes: Buffer): Array<Record<string, unknown>> {
  if (bytes[0] === ZLIB_FIRST_BYTE) return batchRecords(bytes);
  let value = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  if (value.fmt !== FORMAT_ID_V3) return batchRecords(bytes);
  if (value.op === 'zlib') value = JSON.parse(inflateSync(Buffer.from(String(value.zlib), 'base64')).toString('utf8'));
  return value.op === 'scores' ? expandScoresV3(value as ScoresMessageV3) : [value];
}

/** What marks a journal in the runs folder as a score publication (start record `config.extra`). */
const PUBLICATION = 'scores';

/** `scores --publish`'s default: readable JSON batches, as many records as fit. */
export const DEFAULT_SCORE_PACK: PackMode = 'json';

export interface PublishScoresOptions {
  /** Finish this earlier publication (its id was printed when it stopped) instead of starting one. */
  resume?: string;
  /** How records are packed into messages (default {@link DEFAULT_SCORE_PACK}); a resume sends what was journaled. */
  pack?: PackMode;
  /** Where the scored signals were read (required to publish subjects: every record cites it). */
  evidence?: ScoreEvidenceSource;
  /** Tests and benches: submitter tuning. */
  submitter?: Partial<
    Pick<
      SubmitterOptions,
      'window' | 'validSeconds' | 'retryBudgetMs' | 'minBackoffMs' | 'maxBackoffMs' | 'mirrorGraceMs'
    >
  >;
}

export interface PublishScoresResult {
  /** The publication's journal id (`--resume` takes it). */
  publication: string;
  /** In the order the records were journaled. */
  published: PublishedScore[];
  /** Messages the publication holds (confirmed or not). */
  messages: number;
}

/**
 * Packs the subjects' score records into messages, checks the fee forecast (messages × estimated submit fee) against
 * --max-fee-hbar before anything is journaled or sent, then journals each message and submits it through the
 * pipelined submitter (its default window: 128 in flight); or, with `resume`, sends what that publication journaled
 * and never confirmed, under the ids it already had.
 */
export async function publishScores(
  client: Hcs25Client,
  scoreTopic: string,
  subjects: readonly SubjectScore[],
  options: PublishScoresOptions = {},
): Promise<PublishScoresResult> {
  const operator = client.requireOperator();
  if (!options.resume && subjects.length > 0 && !options.evidence) {
    throw new UsageError('score records need their evidence: the signal topic and the sequence range scored', {
      hint: 'pass the evidence of the score report (evidenceSourceOf(report))',
    });
  }
  const messages =
    options.resume || !options.evidence
      ? []
      : packScoresV3(subjects, options.evidence, options.pack ?? DEFAULT_SCORE_PACK);
  const { journal, state } = options.resume
    ? await reopen(client, scoreTopic, options.resume)
    : await begin(client, scoreTopic, messages.length);
  const outcomes: Array<Promise<SubmitOutcome>> = [];
  try {
    const submitter = new Submitter({
      client: await client.connect(),
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: scoreTopic,
      journal,
      // A resumed v2 publication keeps its memo; everything begun now is format 3.
      memo: publicationMemo(state),
      mirror: client.mirror,
      transport: client.submitTransport(),
      ...options.submitter,
    });
    if (options.resume) journal.append({ t: 'resume' });
    state.scores ??= new Map<string, ScoreState>();
    const scores = state.scores;
    for (const r of scores.values())
      if (!r.receipt) outcomes.push(submitter.submit({ key: r.key, message: packBytes(r), prior: r.txIds }));
    const fresh: Array<{ key: string; bytes: Buffer }> = [];
    for (const m of messages) {
      const record = {
        key: `${SCORE_KEY_PREFIX}${scores.size}`,
        encoding: 'json' as const,
        data: packData('json', m.bytes),
        bytes: m.bytes.length,
        subjects: m.records.map((r) => r.subject),
      };
      journal.append({ t: 'scores', ...record });
      scores.set(record.key, { ...record, txIds: [] });
      fresh.push({ key: record.key, bytes: m.bytes });
    }
    // Every message is durable before the first is sent: a crash leaves either a publication `--resume` can finish
    // whole, or one that sent nothing (fewer messages journaled than its start record counts; `reopen` says so).
    await journal.flush();
    for (const m of fresh) outcomes.push(submitter.submit({ key: m.key, message: m.bytes }));
    const settled = await Promise.all(outcomes);
    await submitter.drain();
    const byKey = new Map(settled.map((o) => [o.key, o]));
    const published: PublishedScore[] = [];
    let unsent = 0;
    for (const r of scores.values()) {
      const outcome = byKey.get(r.key);
      const receipt =
        r.receipt ?? (outcome?.status === 'confirmed' ? { txId: outcome.txId, seq: outcome.seq } : undefined);
      if (!receipt) {
        unsent += r.subjects.length;
        continue;
      }
      journaledRecords(packBytes(r)).forEach((record, index) => {
        const subject = r.subjects[index]!;
        const explained = record.explanation !== undefined || record.breakdown !== undefined;
        published.push({
          subject,
          transactionId: receipt.txId,
          sequenceNumber: receipt.seq,
          index,
          bytes: r.bytes,
          explained,
        });
      });
    }
    journal.append({ t: 'end', status: unsent === 0 ? 'complete' : 'stopped' });
    if (unsent > 0) {
      const reason = submitter.fatal?.message ?? 'not every message was confirmed';
      throw new SubmitError(
        'INCOMPLETE',
        `${unsent} of ${published.length + unsent} score records were not published (${reason})`,
        {
          hint: `finish them with \`hcs25 scores --publish --score-topic ${scoreTopic} --resume ${journal.runId}\``,
        },
      );
    }
    return { publication: journal.runId, published, messages: scores.size };
  } finally {
    await journal.close().catch(() => undefined);
  }
}

/** The subjects' score records packed into messages, in the subjects' order. */
export function packScores(subjects: readonly SubjectScore[], mode: PackMode): PackedScores[] {
  const packer = new ScorePacker({ mode });
  const out: PackedScores[] = [];
  for (const s of subjects) {
    const built = scoreMessageFor(s);
    out.push(...packer.add(built, built.bytes));
  }
  out.push(...packer.flush());
  return out;
}

/**
 * The transaction memo of a publication's messages: format 3's, unless its journaled messages are v2 (a publication
 * begun by an earlier hcs25, resumed): it finishes in v2.
 */
export function publicationMemo(state: Pick<RunState, 'scores'>): string {
  const first = state.scores?.values().next().value;
  if (!first) return TRANSACTION_MEMOS_V3.score;
  const bytes = packBytes(first);
  const v2 =
    bytes[0] === ZLIB_FIRST_BYTE || (JSON.parse(bytes.toString('utf8')) as { fmt?: unknown }).fmt !== FORMAT_ID_V3;
  return v2 ? TRANSACTION_MEMOS.score : TRANSACTION_MEMOS_V3.score;
}

async function begin(
  client: Hcs25Client,
  scoreTopic: string,
  messages: number,
): Promise<{ journal: Journal; state: RunState }> {
  const { config } = client;
  const estimate = await estimateSubmitFee(client.network.ledger, client.mirror);
  const forecast = BigInt(messages) * estimate.tinybar;
  if (forecast > hbarToTinybar(config.maxFeeHbar)) {
    throw new FeeCapError(
      `${messages} score messages at an estimated ${formatHbar(estimate.tinybar)} each come to ${formatHbar(forecast)}, more than --max-fee-hbar ${config.maxFeeHbar}`,
      'raise --max-fee-hbar, pack denser (--pack dense), or publish fewer subjects (a narrower --subject or --since)',
    );
  }
  const start: Omit<StartRecord, 't' | 'v' | 'at'> = {
    run: ulid(),
    seed: PUBLICATION,
    // Unused by score records; the journal format wants one, and a fresh one reveals nothing.
    runKey: encodeRunKey(newRunKey()),
    topic: scoreTopic,
    config: {
      network: client.network.ledger,
      operator: client.requireOperator().accountId,
      evals: [],
      concurrency: 1,
      budgetMs: 1,
      maxFeeHbar: config.maxFeeHbar,
      keepResponses: false,
      extra: { publication: PUBLICATION, messages },
    },
    agents: [],
  };
  const journal = await Journal.create(config.stateDir, start);
  return { journal, state: emptyRunState({ t: 'start', v: JOURNAL_VERSION, at: new Date().toISOString(), ...start }) };
}

async function reopen(
  client: Hcs25Client,
  scoreTopic: string,
  id: string,
): Promise<{ journal: Journal; state: RunState }> {
  const opened = await Journal.open(client.config.stateDir, id);
  const { start } = opened.state;
  const problem =
    start.config.extra?.publication !== PUBLICATION
      ? `${id} is a run, not a score publication`
      : start.topic !== scoreTopic
        ? `publication ${id} went to ${start.topic}, not ${scoreTopic}`
        : start.config.network !== client.network.ledger
          ? `publication ${id} was on ${start.config.network}, not ${client.network.ledger}`
          : undefined;
  if (problem) {
    await opened.journal.close().catch(() => undefined);
    throw new UsageError(problem, {
      hint: 'pass the id `hcs25 scores --publish` printed when it stopped, with the same --score-topic and network',
    });
  }
  const planned = start.config.extra?.messages;
  const journaled = opened.state.scores?.size ?? 0;
  if (typeof planned === 'number' && journaled < planned) {
    await opened.journal.close().catch(() => undefined);
    throw new UsageError(
      `publication ${id} stopped while its messages were being journaled (${journaled} of ${planned}): none of them was sent`,
      {
        hint: 'publish the scores again, without --resume',
      },
    );
  }
  return opened;
}
