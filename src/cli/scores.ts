import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { UsageError } from '../core/errors.js';
import { addSourceOptions, readFilters, withSource, type SourceFlags } from './consumer-options.js';
import { entityIdFlag } from './context.js';
import { action, globals, note, printJson, printLine, terminalWidth } from './shared.js';
import { quoteInput } from '../config/secret.js';
import { printScoreChecks } from './verify.js';
import type { ScoringConfig } from '../score/scoring-config.js';

interface ScoresFlags extends SourceFlags {
  scoringConfig?: string;
  printConfig?: boolean;
  now?: string;
  csv?: boolean;
  html?: string;
  publish?: boolean;
  resume?: string;
  pack?: string;
  scoreTopic?: string;
  checkPublished?: boolean;
  /** A names file, false for --no-names. */
  names?: string | false;
}

export function register(program: Command): void {
  addSourceOptions(
    program
      .command('scores')
      .description('compute HCS-25 trust scores per subject from a signal topic')
      .addHelpText(
        'after',
        '\nThe scoring configuration is a versioned JSON file (schemas/scoring-config.schema.json); --print-config\n' +
          'prints the built-in one to start from. (The global --config is the tool configuration, not this one.)\n' +
          'The same signals, configuration and --now give byte-identical --json, --csv and --html output.',
      ),
  )
    .option('--scoring-config <file>', 'HCS-25 scoring configuration (JSON); default: built in')
    .option('--print-config', 'print the scoring configuration in use and exit')
    .option(
      '--now <time>',
      'score as of this time (ISO 8601): freshness is measured from it, later signals are ignored',
    )
    .option('--csv', 'CSV on stdout (one row per subject, ranked)')
    .option('--html <file>', 'also write a self-contained HTML report to this file')
    .option(
      '--publish',
      'submit a format-3 score record per subject, naming its evidence, to --score-topic (memo hcs25-tool/3:score)',
    )
    .option(
      '--pack <mode>',
      'with --publish: json (default: readable op "scores" batches, as many records as fit) | dense (the same deflated, ' +
        'as op "zlib") | subject | none (one op "score" record per message)',
    )
    .option(
      '--resume <publication>',
      'with --publish: finish an interrupted publication (the id it printed) instead of publishing anew',
    )
    .option('--score-topic <id>', 'topic that receives the score messages (with --check-published: the one to check)')
    .option(
      '--check-published',
      'recompute the published score records on --score-topic (or --topic) and report drift; exit 1 on drift',
    )
    .option(
      '--names <file>',
      'display names: JSON {uaid: name}, or agent records (JSON list or lines, e.g. from hcs25 agents)',
    )
    .option('--no-names', 'do not look up names in the registries the signals cite (subjects show their native id)')
    .action(
      action(async (flags: ScoresFlags, cmd: Command) => {
        const json = globals(cmd).json === true;
        if (json && flags.csv) throw new UsageError('--json and --csv cannot be combined');
        if (flags.checkPublished && (flags.publish || flags.csv || flags.html)) {
          throw new UsageError('--check-published cannot be combined with --publish, --csv or --html');
        }
        if (flags.resume && !flags.publish)
          throw new UsageError('--resume goes with --publish', {
            hint: 'pass --publish --score-topic 0.0.1234 --resume ID',
          });
        if (flags.pack !== undefined && !flags.publish)
          throw new UsageError('--pack goes with --publish', {
            hint: 'pass --publish --score-topic 0.0.1234 --pack none',
          });
        if (flags.resume && flags.pack)
          throw new UsageError('--resume sends what the publication journaled; drop --pack');
        if (flags.pack !== undefined && !['json', 'dense', 'subject', 'none'].includes(flags.pack)) {
          throw new UsageError(`--pack must be json, dense, subject or none, got ${quoteInput(flags.pack)}`);
        }
        if (flags.publish && !flags.scoreTopic)
          throw new UsageError('--publish needs --score-topic', { hint: 'pass --score-topic 0.0.1234' });
        if (flags.scoreTopic) entityIdFlag('--score-topic', flags.scoreTopic);
        const now = flags.now === undefined ? new Date() : new Date(flags.now);
        if (Number.isNaN(now.getTime()))
          throw new UsageError(`--now must be an ISO 8601 time, got ${quoteInput(flags.now ?? '')}`);

        const { DEFAULT_SCORING_CONFIG, loadScoringConfig } = await import('../score/scoring-config.js');
        const scoring = flags.scoringConfig ? loadScoringConfig(flags.scoringConfig) : DEFAULT_SCORING_CONFIG;
        if (flags.printConfig) {
          printJson(scoring);
          return;
        }
        if (flags.checkPublished) return checkPublished(cmd, flags, scoring, json);

        const file =
          typeof flags.names === 'string' ? (await import('../read/names.js')).loadNamesFile(flags.names) : undefined;
        const { scoreSignals, publishScoreRecords } = await import('../score/score-signals.js');
        const { evidenceSourceOf } = await import('../score/record-v3.js');
        const { report, published } = await withSource(cmd, flags, async (client, source) => {
          const { report, signals, names } = await scoreSignals(client, {
            ...readFilters(source, flags),
            scoring,
            now,
            resolveNames: { ...(file && { file }), registries: flags.names !== false },
            keepSignals: flags.html !== undefined,
          });
          const foreign = report.counts.rejected['not-hcs25'] ?? 0;
          const rejectedAll = Object.values(report.counts.rejected).reduce((n, k) => n + k, 0);
          if (report.counts.signals === 0 && foreign > 0 && foreign === rejectedAll && !hasUnknowns(report)) {
            // Nothing on it is ours, in any format: scoring it would print an empty table and exit 0, as if it were.
            throw new UsageError(`topic ${source.topic} holds no hcs25 messages (${foreign} of another kind)`, {
              hint: 'pass the signal topic hcs25 run publishes to (a registry topic holds agent listings)',
            });
          }
          if (names && names.failed.length > 0) {
            const first = names.failed[0]!;
            note(
              `note: names from ${names.failed.length} registr${names.failed.length === 1 ? 'y' : 'ies'} unavailable (${first.source}: ${first.reason}); ` +
                'those subjects show their native id (--names FILE to name them, --no-names to skip lookups)',
            );
          }
          if (flags.html) {
            const { renderHtmlReport } = await import('../report/html-report.js');
            writeFileSync(
              flags.html,
              renderHtmlReport(report, signals ?? [], { network: client.network.ledger, scoring }),
            );
            note(`wrote ${flags.html}`);
          }
          if (!flags.publish || !flags.scoreTopic) return { report };
          note(
            `publishing ${flags.resume ? `what publication ${flags.resume} left unsent` : `${report.subjects.length} score record(s)`} to ${flags.scoreTopic}`,
          );
          const evidence = evidenceSourceOf(report);
          const { published, publication, messages } = await publishScoreRecords(client, {
            scoreTopic: flags.scoreTopic,
            subjects: report.subjects,
            ...(evidence && { evidence }),
            ...(flags.resume && { resume: flags.resume }),
            ...(flags.pack && { pack: flags.pack as 'json' | 'dense' | 'subject' | 'none' }),
          });
          note(
            `published ${published.length} score record(s) in ${messages} message(s) to ${flags.scoreTopic} (publication ${publication})`,
          );
          return { report, published };
        });

        if (json) printJson(published ? { ...report, published } : report);
        else if (flags.csv) {
          const { renderScoresCsv } = await import('../report/csv.js');
          process.stdout.write(renderScoresCsv(report));
        } else {
          const { renderScoreTable } = await import('../report/table.js');
          printLine(renderScoreTable(report, terminalWidth()).trimEnd());
        }
      }),
    );
}

/** `--check-published`: every score record on the topic recomputed from its explanation, against `scoring`. */
async function checkPublished(
  cmd: Command,
  flags: ScoresFlags,
  scoring: ScoringConfig,
  json: boolean,
): Promise<number> {
  const { checkScores } = await import('../verify/check-scores.js');
  const result = await withSource(cmd, { ...flags, topic: flags.scoreTopic ?? flags.topic }, (client, source) =>
    checkScores(client, { topic: source.topic, publishers: source.publishers, scoring }),
  );
  if (json) printJson(result);
  else {
    printLine(
      `${result.topic}: score records checked against scoring config v${result.config!.version} (${result.config!.digest})`,
    );
    printScoreChecks(result.counts, result.results);
  }
  return result.counts.mismatch > 0 ? 1 : 0;
}

/** Whether the reader counted anything it does not know (a later format may be all the topic holds). */
function hasUnknowns(report: { counts: { unknown: Record<string, number> } }): boolean {
  return Object.values(report.counts.unknown).some((n) => n > 0);
}
