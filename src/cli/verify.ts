import type { Command } from 'commander';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { PublishedScoreCheck, VerifySignalsReturnType } from '../actions.js';
import type { ScienceBankEntry } from '../evaluate/science.js';
import { entityIdFlag } from './context.js';
import { withSource } from './consumer-options.js';
import { action, collect, globals, note, printJson, printLine } from './shared.js';

interface VerifyFlags {
  topic?: string;
  run?: string;
  publisher?: string[];
  scienceBank?: string;
  stateDir?: string;
  responses?: boolean;
  scoringConfig?: string;
}

/** A ULID, as `hcs25 run` prints it (checked here so a typo never costs a mirror-node read). */
const RUN_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function register(program: Command): void {
  program
    .command('verify')
    .description(
      "check a topic's signals against their runs' reveals, and its score records against their explanations",
    )
    .addHelpText(
      'after',
      '\nFor every SimpleMath/SimpleScience signal of a revealed run, the question is re-derived from the reveal (seed,\n' +
        'generator, science bank) and its question hash, answer, outcome, status and score are checked; where a raw\n' +
        "response is known (the run's journal in --state-dir), its response hash too. Each signal is verified, a\n" +
        'mismatch (naming the field) or unverifiable (with the reason, e.g. no reveal yet). Exit 1 on any mismatch.',
    )
    .option('--topic <id>', 'signal topic (env HCS25_TOPIC)')
    .option('--run <run>', 'only the signals of this run')
    .option(
      '--publisher <account>',
      'trusted publisher (payer account); repeat for more (env HCS25_PUBLISHERS)',
      collect,
    )
    .option('--science-bank <file>', 'the science bank a run used, when it was a private one')
    .option(
      '--state-dir <dir>',
      'where run journals are kept, for their raw responses (env HCS25_STATE_DIR; default .hcs25)',
    )
    .option('--no-responses', "do not check response hashes against local run journals' raw responses")
    .option(
      '--scoring-config <file>',
      'a scoring configuration (JSON) format-3 score records may cite, besides the built-in one',
    )
    .action(
      action(async (flags: VerifyFlags, cmd: Command) => {
        // Every flag is checked before the mirror node is asked anything.
        if (flags.topic !== undefined) entityIdFlag('--topic', flags.topic);
        for (const p of flags.publisher ?? []) entityIdFlag('--publisher', p);
        if (flags.run !== undefined && !RUN_ID.test(flags.run)) {
          throw new UsageError(`--run must be a run id (a 26-character ULID), got "${flags.run.slice(0, 40)}"`);
        }
        let scienceBank: ScienceBankEntry[] | undefined;
        if (flags.scienceBank !== undefined) {
          const { loadScienceBank } = await import('../evaluate/science.js');
          scienceBank = loadScienceBank(flags.scienceBank);
        }
        const scoring = await scoringConfigFlag(flags.scoringConfig);
        const { verifySignals } = await import('../verify/verify-signals.js');
        const report = await withSource(cmd, flags, (client, source) =>
          verifySignals(client, {
            topic: source.topic,
            publishers: source.publishers,
            ...(flags.run !== undefined ? { run: flags.run } : {}),
            ...(scienceBank ? { scienceBank } : {}),
            ...(flags.stateDir !== undefined ? { stateDir: resolve(flags.stateDir) } : {}),
            ...(flags.responses === false ? { responses: false as const } : {}),
            ...(scoring ? { scoring } : {}),
          }),
        );
        if (globals(cmd).json) printJson(report);
        else await printVerifyReport(report);
        return report.counts.mismatch > 0 || report.scoreCounts.mismatch > 0 ? 1 : 0;
      }),
    );
}

async function printVerifyReport(report: VerifySignalsReturnType): Promise<void> {
  const { counts } = report;
  const checked = counts.verified + counts.mismatch + counts.unverifiable;
  printLine(
    `${report.topic}${report.run ? ` run ${report.run}` : ''}: ${checked} eval signal(s): ${counts.verified} verified, ` +
      `${counts.mismatch} mismatch, ${counts.unverifiable} unverifiable` +
      (counts.ignored > 0 ? ` (${counts.ignored} signal(s) without a question not checked)` : ''),
  );
  for (const run of report.runs) {
    const total = run.verified + run.mismatch + run.unverifiable;
    printLine(
      `  run ${run.run}  ${run.revealed ? 'revealed' : 'not revealed'}  verified ${run.verified}/${total} ` +
        `(${percent(run.verified, total)})  mismatch ${run.mismatch}  unverifiable ${run.unverifiable}`,
    );
  }
  const mismatches = report.signals.filter((s) => s.verdict === 'mismatch');
  if (mismatches.length > 0) printLine('mismatches:');
  for (const s of mismatches) {
    // The detail quotes published values (an answer token): as hostile as the subject.
    printLine(`  ${where(s)}  ${s.signal}  ${s.subject}  ${s.field}: ${s.detail}`);
  }
  // Unverifiable signals share their run's reason: one line per run and reason.
  const blocked = new Map<string, { run: string; reason: string; detail: string; n: number }>();
  for (const s of report.signals) {
    if (s.verdict !== 'unverifiable') continue;
    const key = `${s.run} ${s.reason}`;
    const entry = blocked.get(key) ?? { run: s.run, reason: s.reason ?? '', detail: s.detail, n: 0 };
    entry.n++;
    blocked.set(key, entry);
  }
  if (blocked.size > 0) printLine('unverifiable:');
  for (const b of blocked.values()) printLine(`  run ${b.run}  ${b.n} signal(s)  ${b.reason}: ${b.detail}`);
  const checkedResponses = report.signals.filter((s) => s.responseChecked).length;
  if (checkedResponses > 0)
    note(`response hashes checked against ${report.journals.length} local run journal(s): ${checkedResponses}`);
  if (report.scores.length > 0) printScoreChecks(report.scoreCounts, report.scores);
  const rejected = Object.entries(report.read.rejected);
  if (rejected.length > 0) note(`messages not read: ${rejected.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
}

/** `--scoring-config FILE`, loaded (and validated) before the mirror node is asked anything. */
async function scoringConfigFlag(file: string | undefined) {
  if (file === undefined) return undefined;
  const { loadScoringConfig } = await import('../score/scoring-config.js');
  return loadScoringConfig(file);
}

/**
 * The score-record part of `verify` and `scores --check-published`: counts (and what each was recomputed from), then
 * every drift of every record. (Subjects and details are published text: printLine shows them escaped.)
 */
export function printScoreChecks(
  counts: { verified: number; mismatch: number; unverifiable: number },
  results: readonly PublishedScoreCheck[],
): void {
  const fromEvidence = results.filter((r) => r.basis === 'evidence' && r.status === 'verified').length;
  printLine(
    `score records: ${counts.verified} verified (${fromEvidence} recomputed from their evidence, ` +
      `${counts.verified - fromEvidence} from their own explanation), ${counts.mismatch} mismatch, ` +
      `${counts.unverifiable} not checkable`,
  );
  for (const r of results) {
    const subject = r.subject ?? '(no subject)';
    // A record of a batch (op "scores") is named by its index too, as a packed signal is.
    const at = r.index > 0 ? where(r) : `#${r.sequenceNumber}`;
    if (r.status === 'unverifiable') {
      const why = r.reason === 'no-explanation' ? 'no explanation to recompute from' : String(r.actual ?? '');
      printLine(`  ${at}  ${subject}  not checkable (${r.reason ?? 'unknown'}): ${why}`);
    }
    for (const d of r.drifts)
      printLine(`  ${at}  ${subject}  ${d.field}: expected ${String(d.expected)}, published ${String(d.actual)}`);
  }
}

/** Sequence number and index in the message: `#12[3]` is the fourth signal of the pack at sequence 12. */
function where(s: { sequenceNumber?: number; index?: number }): string {
  return `#${s.sequenceNumber ?? '?'}[${s.index ?? 0}]`;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '-' : `${Math.floor((part / whole) * 1000) / 10}%`;
}
