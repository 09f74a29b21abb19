import type { Command } from 'commander';
import { quoteInput } from '../config/secret.js';
import { UsageError } from '../core/errors.js';
import { parseGraderId } from '../evaluate/graders.js';
import { DEFAULT_EVALS, parseEvalList } from '../evaluate/eval-list.js';
import type { DryRunEntry, RunProgress, RunReport } from '../publish/report.js';
import { subjectLabel } from '../read/labels.js';
import { inputFileFlag, withClient } from './context.js';
import {
  action,
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  globals,
  type Hcs10Flags,
  hcs10Options,
  hcs10Parameters,
  intOption,
  note,
  numberOption,
  parseDuration,
  printJson,
  printLine,
} from './shared.js';

interface RunFlags extends Hcs10Flags {
  retryFor?: string;
  registry?: string;
  agents?: string;
  topic?: string;
  evals: string;
  concurrency?: number;
  budgetMs?: number;
  seed?: string;
  dryRun?: boolean;
  force?: boolean;
  resume?: string;
  maxFeeHbar?: number;
  stateDir?: string;
  keepResponses: boolean;
  allowPrivateEndpoints?: boolean;
  grader?: string;
  scienceBank?: string;
  pack?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('run')
    .description('discover → evaluate → publish HCS-25 signals (journaled, resumable, pipelined)')
    .option('--registry <id>', 'registry topic to discover agents from (HCS-2 or HCS-10; env HCS25_REGISTRY)')
    .option('--agents <file>', 'a JSON list of agent records instead of a registry')
    .option('--topic <id>', 'signal topic to publish to (env HCS25_TOPIC)')
    .option('--evals <list>', `comma-separated: ${DEFAULT_EVALS.join(', ')}`, DEFAULT_EVALS.join(','))
    .option(
      '--concurrency <n>',
      'evals in flight at once (env HCS25_CONCURRENCY; default 16)',
      intOption('--concurrency', 1, 1000),
    )
    .option(
      '--budget-ms <ms>',
      'time budget per eval (env HCS25_BUDGET_MS; default 30000)',
      intOption('--budget-ms', 100, 600_000),
    )
    .option('--seed <seed>', 'question seed (default: random, recorded in the journal)')
    .option(
      '--force',
      'publish to a topic whose memo is not an HCS-25 signal topic memo (a registry topic, say): on purpose only',
    )
    .option(
      '--pack <mode>',
      'json (default: many subjects per message, readable JSON) | subject (one subject per message) | none (one signal per message) | dense (json deflated, base64 in an op "zlib" message: fewer messages, not readable in an explorer)',
    )
    .option(
      '--dry-run',
      'evaluate and list every message, one line each (op, size in bytes, signals, estimated fee, subjects), the first also in full as pretty JSON; submit nothing',
    )
    .option(
      '--resume <run>',
      'continue a run from its journal: re-evaluates only what has no result, resubmits only what has no receipt',
    )
    .option(
      '--max-fee-hbar <hbar>',
      'cap on the fees of the whole run (env HCS25_MAX_FEE_HBAR; default 5)',
      numberOption('--max-fee-hbar', 0.00000001, 10_000),
    )
    .option(
      '--retry-for <duration>',
      'how long to wait out a busy or unreachable network without progress (saying so) before stopping, resumable (env HCS25_RETRY_FOR; default 5m)',
    )
    .option('--state-dir <dir>', 'where run journals are kept (env HCS25_STATE_DIR; default .hcs25)')
    .option('--no-keep-responses', 'do not keep raw agent responses in the journal (re-grading will not be possible)')
    .option('--allow-private-endpoints', 'allow agents on loopback/private addresses (default only on --network local)')
    .option('--grader <id>', 'first-token@1 (default; follows the HCS-25 seed literally) | last-answer@1')
    .option('--science-bank <file>', 'a private SimpleScience bank (JSON, schemas/science-bank.schema.json)')
    .action(
      action(async (flags: RunFlags, cmd: Command) => {
        if (flags.registry && flags.agents) throw new UsageError('give --registry or --agents, not both');
        if (flags.resume && (flags.registry || flags.agents)) {
          throw new UsageError('--resume takes the agents from the run journal; drop --registry/--agents');
        }
        if (flags.resume && (flags.grader || flags.scienceBank)) {
          throw new UsageError(
            '--resume grades as the run began (its journal keeps the grader and science bank); drop --grader/--science-bank',
          );
        }
        if (flags.resume && flags.pack) throw new UsageError('--resume packs as the run began; drop --pack');
        if (flags.pack !== undefined && !['json', 'subject', 'none', 'dense'].includes(flags.pack)) {
          throw new UsageError(`--pack must be json, subject, none or dense, got ${quoteInput(flags.pack)}`);
        }
        const evals = parseEvalList(flags.evals);
        if (flags.retryFor !== undefined) parseDuration('--retry-for', flags.retryFor);
        if (flags.agents) {
          inputFileFlag('--agents', flags.agents);
          // A file that is not agent records is a usage error (exit 2), found before any node is asked anything.
          const [{ readFileSync }, { basename }, { parseAgentsFile }] = await Promise.all([
            import('node:fs'),
            import('node:path'),
            import('../discover/agents-file.js'),
          ]);
          parseAgentsFile(readFileSync(flags.agents, 'utf8'), basename(flags.agents));
        }
        if (flags.scienceBank) inputFileFlag('--science-bank', flags.scienceBank);
        const json = globals(cmd).json === true;
        const [{ runSignals }, { renderProgress }, { formatHbar }] = await Promise.all([
          import('../publish/run-signals.js'),
          import('../evaluate/progress.js'),
          import('../publish/fees.js'),
        ]);
        const configFlags = {
          registry: flags.registry,
          topic: flags.topic,
          concurrency: flags.concurrency,
          budgetMs: flags.budgetMs,
          maxFeeHbar: flags.maxFeeHbar,
          stateDir: flags.stateDir,
          retryFor: flags.retryFor,
          ...(flags.allowPrivateEndpoints ? { allowPrivateEndpoints: true } : {}),
        };

        const bar = !json && process.stderr.isTTY ? progressLine(process.stderr, renderProgress) : undefined;
        let dryRunMessages = 0;
        const controller = new AbortController();
        let interrupts = 0;
        const onSignal = () => {
          interrupts++;
          if (interrupts > 1) process.exit(EXIT_INTERRUPTED);
          note(
            '\nhcs25: stopping — waiting for receipts of what is in flight (Ctrl-C again to quit at once; the journal stays resumable)',
          );
          controller.abort(new Error('interrupted'));
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        let report: RunReport;
        try {
          report = await withClient(cmd, configFlags, (client) => {
            const registry = flags.registry ?? client.config.registry;
            const source = flags.agents ? { agentsFile: flags.agents } : registry ? { registry } : undefined;
            if (!flags.resume && !source)
              throw new UsageError('a run needs agents: --registry ID or --agents FILE (or HCS25_REGISTRY)');
            const topic = flags.topic ?? client.config.topic;
            return runSignals(client, {
              ...(source ? { source } : {}),
              ...(topic ? { topic } : {}),
              evals,
              ...(flags.seed ? { seed: flags.seed } : {}),
              ...(flags.dryRun ? { dryRun: true } : {}),
              retryForMs: client.config.retryForMs,
              ...(flags.force ? { force: true } : {}),
              ...(flags.resume ? { resume: flags.resume } : {}),
              ...(flags.pack ? { pack: flags.pack as 'json' | 'subject' | 'none' | 'dense' } : {}),
              keepResponses: flags.keepResponses,
              ...(flags.grader && { grader: parseGraderId(flags.grader) }),
              ...(flags.scienceBank && { scienceBank: flags.scienceBank }),
              hcs10: hcs10Parameters(flags),
              signal: controller.signal,
              onNote: (line) => {
                if (!json) note(line);
              },
              ...(bar ? { onProgress: (p: RunProgress) => bar.update(p) } : {}),
              onDryRunMessage: (m) => {
                if (!json) printLine(dryRunLine(++dryRunMessages, m, formatHbar));
              },
            });
          });
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          bar?.finish();
        }
        if (json) {
          printJson(report);
        } else {
          printSummary(report, formatHbar);
        }
        if (report.status === 'complete' || report.status === 'dry-run') return EXIT_OK;
        if (!json) {
          if (report.error)
            note(`hcs25: ${report.error.message}${report.error.hint ? `\n  hint: ${report.error.hint}` : ''}`);
          const unsent =
            report.signals.unsent > 0 ? ` (${report.signals.unsent} built and kept in the journal, unsent)` : '';
          note(
            `hcs25: run ${report.run} ${report.status} with ${report.signals.published}/${report.signals.expected} signals published${unsent} — resume with: hcs25 run --resume ${report.run}`,
          );
        }
        return report.status === 'interrupted' ? EXIT_INTERRUPTED : EXIT_FAILURE;
      }),
    );
  hcs10Options(cmd);
}

/** One status line on a TTY: the eval bar and what is published, redrawn at most 10 times a second. */
function progressLine(
  stream: NodeJS.WriteStream,
  renderEvals: (p: RunProgress['evals']) => string,
): { update(p: RunProgress): void; finish(): void } {
  let last = 0;
  let latest: RunProgress | undefined;
  let drawn = false;
  const draw = () => {
    if (!latest) return;
    const { confirmed, pending, retries } = latest.submitted;
    const publish = `published ${confirmed}${pending > 0 ? ` (+${pending} awaiting receipt)` : ''}${retries > 0 ? `, ${retries} retries` : ''}`;
    stream.write(`\r${renderEvals(latest.evals)}  ${publish}\x1b[K`);
    drawn = true;
    last = Date.now();
  };
  return {
    update(p) {
      latest = p;
      if (Date.now() - last >= 100) draw();
    },
    finish() {
      draw();
      if (drawn) stream.write('\n');
    },
  };
}

function printSummary(r: RunReport, formatHbar: (t: bigint) => string): void {
  const secs = (r.durationMs / 1000).toFixed(1);
  const rows: [string, string][] = [
    ['run', `${r.run}${r.resumed ? ' (resumed)' : ''}`],
    ['status', r.status],
    ['topic', r.topic || '—'],
    ['agents', `${r.agents}${r.skipped.length ? ` (${r.skipped.length} registry entries skipped)` : ''}`],
    [
      'evals',
      `${r.evals.total}: ${r.evals.correct} correct, ${r.evals.wrong} wrong, ${r.evals.failed} failed${r.evals.skipped ? `, ${r.evals.skipped} skipped` : ''}${r.evals.notAsked ? ` (${r.evals.notAsked} not asked: probe unreachable)` : ''}`,
    ],
    [
      r.status === 'dry-run' ? 'signals built' : 'signals published',
      r.status === 'dry-run'
        ? `${r.evals.total - r.signals.buildErrors} (nothing submitted)`
        : `${r.signals.published}/${r.signals.expected}${r.signals.duplicates ? ` (${r.signals.duplicates} confirmed as duplicates)` : ''}${r.signals.unsent ? `, ${r.signals.unsent} unsent` : ''}${r.signals.buildErrors ? `, ${r.signals.buildErrors} not built` : ''}`,
    ],
    [
      r.status === 'dry-run' ? 'messages (estimated)' : 'messages',
      `${r.messages.count}, ${r.messages.bytes} B (max ${r.messages.maxBytes} B), ${r.messages.signalsPerMessage} signals per message, ${r.messages.perAgent} per agent`,
    ],
    ...(r.mirror
      ? [
          [
            'on mirror node',
            `${r.mirror.confirmed} read back byte for byte${r.mirror.missing ? `, ${r.mirror.missing} not visible yet` : ''}${r.mirror.mismatched ? `, ${r.mirror.mismatched} MISMATCHED` : ''}`,
          ] as [string, string],
        ]
      : []),
    [
      r.status === 'dry-run' ? 'fees (estimated)' : 'fees',
      `${r.fees.spent} (≈${formatHbar(BigInt(r.fees.estimatePerMessageTinybar))} per message; cap ${r.fees.cap})`,
    ],
    ['duration', `${secs} s`],
  ];
  if (r.journal) rows.push(['journal', r.journal]);
  const width = Math.max(...rows.map(([k]) => k.length));
  printLine('');
  for (const [k, v] of rows) printLine(`${k.padEnd(width)}  ${v}`);
  for (const s of r.skipped.slice(0, 5)) printLine(`  skipped ${s.ref}: ${s.reason}`);
  if (r.skipped.length > 5) printLine(`  … ${r.skipped.length - 5} more skipped (see hcs25 discover)`);
  for (const l of r.list.filter((x) => x.problem).slice(0, 5))
    printLine(`  ${l.signal} ${l.subject.slice(0, 60)}: ${l.problem}`);
}

/**
 * A dry run's message: one line (op, size, signals, subjects by native id, fee), and the first one in full, indented,
 * as it would read on the ledger: a whole run's messages as raw JSON would be thousands of kilobyte-long lines.
 */
function dryRunLine(n: number, m: DryRunEntry, formatHbar: (tinybar: bigint) => string): string {
  const message = JSON.parse(m.preview) as { op?: unknown; subjects?: Array<{ id?: unknown }> };
  const subjects = (message.subjects ?? []).map((s) => (typeof s.id === 'string' ? subjectLabel(s.id) : '?'));
  const op = typeof message.op === 'string' ? message.op : '?';
  const line =
    `message ${n}: op ${m.encoding === 'zlib' ? `zlib (${op})` : op}, ${m.bytes} B, ${m.signals} signal(s), ` +
    `~${formatHbar(m.estimatedFeeTinybar)}: ${subjects.join(', ')}`;
  if (n > 1) return line;
  const full = JSON.stringify(message, null, 2).replace(/^/gm, '  ');
  return `${line}\n  as it would read on the ledger${m.encoding === 'zlib' ? ' (inflated)' : ''}:\n${full}`;
}
