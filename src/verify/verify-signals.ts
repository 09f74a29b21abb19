/**
 * Verify: a signal topic on the mirror node → every signal checked against its run's reveal (with a verdict saying
 * what was checked), and every score record recomputed from its explanation. It reads the topic through the reader
 * like any consumer (so v1, v2 and packed signals alike, allow-listed and deduplicated; conflicting copies are
 * equivocation), reads the registries the runs cite as of each run's start, then hands the pure library (src/verify)
 * what it read. The publisher's own run journals, when present in the state dir, add the raw responses their hashes
 * commit to.
 */
import { existsSync } from 'node:fs';
import type { Hcs25Client } from '../client.js';
import { countReasons } from '../read/reader.js';
import type { ScienceBankEntry } from '../evaluate/science.js';
import { RUN_ID_PATTERN } from '../core/ids.js';
import { journalPath, readJournal } from '../publish/journal.js';
import { responseHashV2 } from '../format/hashing.js';
import { verifySignals as verifyRead, type VerifiableSignal, type VerifyReport } from './signals.js';
import { journalResponses } from './journal.js';
import { equivocationOf, revealOf, verifiableSignal } from './read.js';
import { checkRegistries } from './registry.js';
import { checkScoreRecordsWithEvidence, type PublishedScoreCheck } from './check-scores.js';
import type { ScoringConfig } from '../score/scoring-config.js';
import { collectSignals } from '../read/read-signals.js';

export interface VerifySignalsParameters {
  topic: string;
  /** Only the signals of this run (reveals and score records are read whatever their run). */
  run?: string;
  /** Publisher allow-list (payer accounts); absent or empty: every payer (a reveal still applies only to its payer's signals). */
  publishers?: readonly string[];
  /** The science bank a run used, when the bundled one is not it (a private bank). */
  scienceBank?: readonly ScienceBankEntry[];
  /** Where run journals are kept (default: the client's state dir). */
  stateDir?: string;
  /** Read the registries the runs cite, to check their subjects were listed when the run started (default true). */
  registries?: boolean;
  /**
   * Raw responses to check response hashes with: by default those the run journals in `stateDir` kept, for signals
   * paid by the account that ran them; `false` checks none; a function supplies them.
   */
  responses?: false | ((signal: VerifiableSignal) => string | null | undefined);
  /** A scoring config besides the built-in one that format-3 score records may cite (`--scoring-config FILE`). */
  scoring?: ScoringConfig;
}

export interface VerifySignalsReturnType extends Omit<VerifyReport, 'scores'> {
  topic: string;
  run?: string;
  /** Score records recomputed (format 3: from their evidence; v1/v2: from their explanations), with where each was read. */
  scores: PublishedScoreCheck[];
  scoreCounts: { verified: number; mismatch: number; unverifiable: number };
  /** What the reader saw: signals (all runs and kinds), reveals, score records, rejections by reason. */
  read: { signals: number; reveals: number; scoreRecords: number; rejected: Record<string, number> };
  /** Runs whose journal supplied raw responses. */
  journals: string[];
}

export async function verifySignals(
  client: Hcs25Client,
  parameters: VerifySignalsParameters,
): Promise<VerifySignalsReturnType> {
  const { topic, run } = parameters;
  const collected = await collectSignals(client, {
    topic,
    ...(parameters.publishers ? { publishers: parameters.publishers } : {}),
  });
  const read = collected.signals.filter((s) => run === undefined || s.message.run === run);
  const signals = read.map(verifiableSignal);
  const reveals = collected.records.flatMap(revealOf);
  const equivocations = collected.rejected.flatMap(equivocationOf).filter((e) => run === undefined || e.run === run);
  const registries = parameters.registries === false ? [] : await checkRegistries(client, read);

  const journals: string[] = [];
  let responseOf: ((signal: VerifiableSignal) => string | null | undefined) | undefined;
  if (typeof parameters.responses === 'function') responseOf = parameters.responses;
  else if (parameters.responses !== false) {
    const found = await journaledResponses(parameters.stateDir ?? client.config.stateDir, signals);
    journals.push(...found.keys());
    if (found.size > 0) responseOf = (s) => found.get(s.run)?.(s);
  }

  const report = verifyRead({
    signals,
    reveals,
    registries,
    equivocations,
    ...(parameters.scienceBank ? { scienceBank: parameters.scienceBank } : {}),
    ...(responseOf ? { responseOf } : {}),
    keyedResponseHash: (key, s, response) => responseHashV2(key, s.signal, s.subject, response),
  });
  const scores = await checkScoreRecordsWithEvidence(client, collected.records, {
    configs: parameters.scoring ? [parameters.scoring] : [],
  });
  return {
    ...report,
    topic,
    ...(run !== undefined ? { run } : {}),
    scores: scores.results,
    scoreCounts: scores.counts,
    read: {
      signals: collected.signals.length,
      reveals: reveals.length,
      scoreRecords: scores.results.length,
      rejected: countReasons(collected.rejected),
    },
    journals,
  };
}

/**
 * The responses of every run read whose journal is in `stateDir`, by run id. A journal speaks only for the signals its
 * operator paid for: a signal of the same run id from another payer gets no response from it.
 */
async function journaledResponses(
  stateDir: string,
  signals: readonly VerifiableSignal[],
): Promise<Map<string, (s: VerifiableSignal) => string | null>> {
  const out = new Map<string, (s: VerifiableSignal) => string | null>();
  for (const run of new Set(signals.map((s) => s.run))) {
    if (!RUN_ID_PATTERN.test(run)) continue;
    const path = journalPath(stateDir, run);
    if (!existsSync(path)) continue;
    const { state } = await readJournal(path);
    const responseOf = journalResponses(state);
    const operator = state.start.config.operator;
    out.set(run, (s) => (operator === undefined || s.payer === operator ? responseOf(s) : null));
  }
  return out;
}
