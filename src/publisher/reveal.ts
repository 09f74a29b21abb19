/**
 * `hcs25 reveal`: publishes what re-derives a run's questions (`op: "reveal"`, v2: key, seed, generator, grader and
 * science bank digest) so anyone can check its signals. It goes through the same journal and submitter as the
 * signals, under the key `reveal|<topic>`, so running it twice (or after a crash) never puts it on the topic twice.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Client } from '@hashgraph/sdk';
import { z } from 'zod';
import { requireOperator, type ResolvedConfig } from '../config/load.js';
import { UsageError } from '../errors.js';
import { BUILTIN_SCIENCE_BANK_ID, PRIVATE_SCIENCE_BANK_ID, QUESTION_GENERATOR, scienceBankDigest } from '../evals/generator.js';
import { DEFAULT_GRADER, GRADER_IDS } from '../evals/graders.js';
import { loadScienceBank, type ScienceBankEntry } from '../evals/science.js';
import type { GraderId } from '../evals/types.js';
import { createClient, parsePrivateKey } from '../hedera/client.js';
import { MirrorRestClient } from '../hedera/mirror-rest.js';
import { decodeRunKey, encodeRunKey } from '../signals/hashing.js';
import { buildRevealMessageV2, type RevealMessageV2 } from '../signals/reveal.js';
import type { SizedMessage } from '../signals/score.js';
import { TRANSACTION_MEMOS } from '../signals/schemas.js';
import { Journal, revealKey, type RunConfigSummary, type RunState } from './journal.js';
import { operatorSigner } from './signer.js';
import { Submitter } from './submitter.js';

export interface RevealOptions {
  config: ResolvedConfig;
  run: string;
  /** Default: the run's signal topic. */
  topic?: string;
  /** Reveal although the run has not finished (its later signals could then be answered with the key known). */
  force?: boolean;
  client?: Client;
}

export interface RevealResult {
  run: string;
  topic: string;
  txId: string;
  seq: number;
  /** Already revealed to this topic earlier; nothing new was sent. */
  already: boolean;
}

export async function revealRun(options: RevealOptions): Promise<RevealResult> {
  const { config } = options;
  const operator = requireOperator(config);
  const { journal, state } = await Journal.open(config.stateDir, options.run);
  const mirror = new MirrorRestClient({ baseUrl: config.network.mirrorRestUrl });
  const ownsClient = !options.client;
  let client: Client | undefined = options.client;
  try {
    // Topic ids are per network: the same id elsewhere is another topic, or none.
    if (state.start.config.network !== config.network.ledger) {
      throw new UsageError(`run ${options.run} ran on ${state.start.config.network}, not ${config.network.ledger}`, { hint: `pass --network ${state.start.config.network}` });
    }
    const topic = options.topic ?? state.start.topic;
    const done = state.reveals.get(topic)?.receipt;
    if (done) return { run: options.run, topic, txId: done.txId, seq: done.seq, already: true };
    const unfinished = [...state.signals.values()].some((s) => s.message && !s.receipt);
    if ((state.end?.status !== 'complete' || unfinished) && !options.force) {
      throw new UsageError(`run ${options.run} has not finished publishing (${state.end ? state.end.status : 'no end record'})`, {
        hint: `finish it with \`hcs25 run --resume ${options.run}\` first, or pass --force to reveal anyway`,
      });
    }
    if (state.start.config.operator && state.start.config.operator !== operator.accountId && (state.reveals.get(topic)?.txIds.length ?? 0) > 0) {
      throw new UsageError(`an earlier reveal of run ${options.run} was paid by ${state.start.config.operator}`, { hint: 'reveal with the same operator account' });
    }
    const message = revealMessageFor(state);
    client ??= createClient(config, { grpcDeadlineMs: 5_000, requestTimeoutMs: 30_000 });
    const submitter = new Submitter({
      client,
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: topic,
      journal,
      memo: TRANSACTION_MEMOS.reveal,
      mirror,
      window: 1,
    });
    const key = revealKey(topic);
    const outcome = await submitter.submit({ key, json: message.json, prior: state.reveals.get(topic)?.txIds ?? [] });
    if (outcome.status !== 'confirmed') throw submitter.fatal ?? new UsageError(`the reveal was not published: ${outcome.reason}`);
    return { run: options.run, topic, txId: outcome.txId, seq: outcome.seq, already: false };
  } finally {
    await journal.close().catch(() => undefined);
    await mirror.close();
    if (ownsClient) client?.close();
  }
}

/** The grading choices a run journals in `config.extra` (run.ts writes them at start). */
const gradingSchema = z.object({
  grader: z.enum(GRADER_IDS).optional(),
  scienceBank: z.string().optional(),
  scienceBankSha256: z.string().optional(),
});

export interface RunQuestionSource {
  grader: GraderId;
  /** The SimpleScience bank the run drew from, when it asked science questions. */
  bank?: { id: string; entries: ScienceBankEntry[] };
}

/**
 * What a journaled run derived its questions from: its grader and science bank (the bundled one, or the private file
 * it named, refused if the file changed since the run began: its questions decide the published question hashes).
 */
export function runQuestionSource(config: RunConfigSummary): RunQuestionSource {
  const extra = gradingSchema.parse(config.extra ?? {});
  const grader = extra.grader ?? DEFAULT_GRADER;
  if (!config.evals.includes('science')) return { grader };
  if (!extra.scienceBank) return { grader, bank: { id: BUILTIN_SCIENCE_BANK_ID, entries: loadScienceBank() } };
  if (fileSha256(extra.scienceBank) !== extra.scienceBankSha256) {
    throw new UsageError(`the science bank ${extra.scienceBank} changed since the run began`, {
      hint: 'restore the file the run started with: its questions decide which question hashes were published',
    });
  }
  return { grader, bank: { id: PRIVATE_SCIENCE_BANK_ID, entries: loadScienceBank(extra.scienceBank) } };
}

function fileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (err) {
    throw new UsageError(`cannot read the science bank ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** The v2 reveal of a journaled run. A private bank is published by digest only, never by path or content. */
export function revealMessageFor(state: RunState): SizedMessage<RevealMessageV2> {
  const source = runQuestionSource(state.start.config);
  return buildRevealMessageV2({
    run: state.start.run,
    key: encodeRunKey(decodeRunKey(state.start.runKey)),
    seed: state.start.seed,
    generator: QUESTION_GENERATOR,
    grader: source.grader,
    ...(source.bank ? { bank: { id: source.bank.id, digest: scienceBankDigest(source.bank.entries) } } : {}),
  });
}
