import type { Command } from 'commander';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { PublishedScoreCheck, VerifySignalsReturnType } from '../actions.js';
import type { ScienceBankEntry } from '../evaluate/science.js';
import { VERDICTS, type VerdictCounts } from '../verify/findings.js';
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
  registries?: boolean;
  scoringConfig?: string;
}

/** A ULID, as `hcs25 run` prints it (checked here so a typo never costs a mirror-node read). */
const RUN_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function register(program: Command): void {
  program
    .command('verify')
    .description(
      "check a topic's signals against their runs' reveals, and its score records against the signals they cite",
    )
    .addHelpText(
      'after',
      "\nEvery signal gets one verdict saying what was checked: re-derived (the question re-derived from the reveal's\n" +
        'seed, generator and science bank; expected answer and grade recomputed; question hash, answer, outcome, status\n' +
        'and score agree), commitment-checked (only a hash could be checked: e.g. an unparseable reply, or a response hash\n' +
        'against the run journal when the reveal has no seed), not-checkable (with the reason: nothing was asked, no\n' +
        'reveal, a private bank not passed, an availability probe) or mismatch (naming the field). A signal submitted\n' +
        "after its run's reveal, or whose subject its cited registry did not list when the run started, is a mismatch;\n" +
        'a second copy of a signal with other content (same publisher, run, signal and subject) is equivocation.\n' +
        'Exit 1 on any mismatch or equivocation.',
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
    .option('--no-registries', 'do not read the registries the runs cite (their subjects are then not checked)')
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
            ...(flags.registries === false ? { registries: false } : {}),
            ...(scoring ? { scoring } : {}),
          }),
        );
        if (globals(cmd).json) printJson(report);
        else await printVerifyReport(report);
        return report.counts.mismatch > 0 || report.counts.equivocation > 0 || report.scoreCounts.mismatch > 0 ? 1 : 0;
      }),
    );
}

async function printVerifyReport(report: VerifySignalsReturnType): Promise<void> {
  const { counts } = report;
  const total = VERDICTS.reduce((n, v) => n + counts[v], 0);
  printLine(
    `${report.topic}${report.run ? ` run ${report.run}` : ''}: ${total} signal(s): ${verdictCounts(counts)}, ` +
      `${counts.equivocation} equivocation(s)`,
  );
  for (const run of report.runs) {
    const n = VERDICTS.reduce((sum, v) => sum + run[v], 0);
    const reveal = run.revealed
      ? `revealed${run.revealSequence !== undefined ? ` at #${run.revealSequence}` : ''}`
      : 'not revealed';
    printLine(
      `  run ${run.run}  ${reveal}  ${n} signal(s): ${verdictCounts(run)}` +
        (run.equivocation > 0 ? `, ${run.equivocation} equivocation(s)` : ''),
    );
    for (const r of run.registries) {
      printLine(
        `    registry ${r.source} as of ${r.asOf}: ` +
          (r.notListed === undefined
            ? `not checkable: ${r.notCheckable ?? 'not read'}`
            : `${r.cited} subject(s) cited, ${r.notListed.length} not listed` +
              (r.unresolved ? ` (${r.unresolved} registry entries could not be resolved now)` : '')),
      );
    }
  }
  const mismatches = report.signals.filter((s) => s.verdict === 'mismatch');
  if (mismatches.length > 0) printLine('mismatches:');
  for (const s of mismatches) {
    // The detail quotes published values (an answer token): as hostile as the subject.
    printLine(`  ${where(s)}  ${s.signal}  ${s.subject}  ${s.field}: ${s.detail}`);
  }
  if (report.equivocations.length > 0) printLine('equivocations (conflicting copies; the first one is the one read):');
  for (const e of report.equivocations) {
    printLine(`  ${where(e)}  ${e.signal}  ${e.subject}  payer ${e.payer}: contradicts #${e.firstSequence}`);
  }
  // Signals that were not re-derived share their run's reason: one line per run, verdict and reason.
  for (const verdict of ['commitment-checked', 'not-checkable'] as const) {
    const groups = new Map<string, { run: string; detail: string; n: number }>();
    for (const s of report.signals) {
      if (s.verdict !== verdict) continue;
      const key = `${s.run} ${s.detail}`;
      const entry = groups.get(key) ?? { run: s.run, detail: `${s.reason ? `${s.reason}: ` : ''}${s.detail}`, n: 0 };
      entry.n++;
      groups.set(key, entry);
    }
    if (groups.size > 0) printLine(`${verdict}:`);
    for (const g of groups.values()) printLine(`  run ${g.run}  ${g.n} signal(s)  ${g.detail}`);
  }
  const checkedResponses = report.signals.filter((s) => s.responseChecked).length;
  if (checkedResponses > 0)
    note(`response hashes checked against ${report.journals.length} local run journal(s): ${checkedResponses}`);
  if (report.scores.length > 0) printScoreChecks(report.scoreCounts, report.scores);
  const rejected = Object.entries(report.read.rejected);
  if (rejected.length > 0) note(`messages not read: ${rejected.map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
}

/** `2 re-derived, 1 commitment-checked, 0 not-checkable, 0 mismatch`. */
function verdictCounts(counts: VerdictCounts): string {
  return VERDICTS.map((v) => `${counts[v]} ${v}`).join(', ');
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
    `score records: ${fromEvidence} recomputed from their evidence, ` +
      `${counts.verified - fromEvidence} consistent with their own explanation, ${counts.mismatch} mismatch, ` +
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
