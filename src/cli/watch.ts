import type { Command } from 'commander';
import { quoteInput } from '../config/secret.js';
import { UsageError } from '../core/errors.js';
import { StatusLine } from './status-line.js';
import { parseGraderId } from '../evaluate/graders.js';
import { DEFAULT_EVALS, parseEvalList } from '../evaluate/eval-list.js';
import { entityIdFlag, inputFileFlag, withClient } from './context.js';
import {
  action,
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
} from './shared.js';

interface WatchFlags extends Hcs10Flags {
  registry?: string;
  topic?: string;
  every: string;
  perHost?: number;
  maxFeePerDay?: number;
  maxRunSignals?: number;
  statusPort?: number;
  statusEvery: string;
  evals: string;
  pack?: string;
  concurrency?: number;
  budgetMs?: number;
  stateDir?: string;
  keepResponses?: boolean;
  keepJournals: string;
  allowPrivateEndpoints?: boolean;
  grader?: string;
  scienceBank?: string;
  force?: boolean;
  grpc: boolean;
  pollMs?: number;
  shutdownMs?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('watch')
    .description(
      'long-running publisher: follow a registry, evaluate new agents at once and every agent on a schedule, publish through the journal',
    )
    .option('--registry <id>', 'registry topic to follow (HCS-2 or HCS-10; env HCS25_REGISTRY)')
    .option('--topic <id>', 'signal topic to publish to (env HCS25_TOPIC)')
    .option(
      '--every <duration>',
      'cycle: every agent is asked once per cycle, spread evenly over it (one run per cycle)',
      '24h',
    )
    .option('--per-host <n>', 'asks per endpoint host per minute (default 60)', intOption('--per-host', 1, 100_000))
    .option(
      '--max-fee-per-day <hbar>',
      'daily fee cap; asking pauses until 00:00 UTC when reached (default 20)',
      numberOption('--max-fee-per-day', 0.00000001, 100_000),
    )
    .option(
      '--max-run-signals <n>',
      'signals per run at most: a larger cycle is published as several runs (default 30000)',
      intOption('--max-run-signals', 3, 10_000_000),
    )
    .option(
      '--status-port <port>',
      'serve GET /healthz (JSON) and GET /metrics (Prometheus) on 127.0.0.1:PORT',
      intOption('--status-port', 0, 65_535),
    )
    .option('--status-every <duration>', 'without a terminal: print a status line this often', '60s')
    .option('--evals <list>', `comma-separated: ${DEFAULT_EVALS.join(', ')}`, DEFAULT_EVALS.join(','))
    .option('--pack <mode>', 'json (default: readable, many subjects per message) | subject | none | dense (zlib)')
    .option(
      '--concurrency <n>',
      'agents asked at once (env HCS25_CONCURRENCY; default 16)',
      intOption('--concurrency', 1, 1000),
    )
    .option(
      '--budget-ms <ms>',
      'time budget per eval (env HCS25_BUDGET_MS; default 30000)',
      intOption('--budget-ms', 100, 600_000),
    )
    .option('--state-dir <dir>', 'where journals and the watch state are kept (env HCS25_STATE_DIR; default .hcs25)')
    .option('--keep-responses', 'keep raw agent responses in the journals (default: not kept by watch)')
    .option(
      '--keep-journals <duration>',
      'remove the journal of a run this long after its reveal, or "all" to keep every journal',
      '7d',
    )
    .option('--allow-private-endpoints', 'allow agents on loopback/private addresses (default only on --network local)')
    .option('--grader <id>', 'first-token@1 (default) | last-answer@1')
    .option('--science-bank <file>', 'a private SimpleScience bank (JSON, schemas/science-bank.schema.json)')
    .option('--force', 'publish to a topic whose memo is not an HCS-25 signal topic memo')
    .option('--no-grpc', 'follow the registry by polling the mirror REST API only (no mirror gRPC subscription)')
    .option('--poll-ms <ms>', 'mirror REST polling period (default 2000)', intOption('--poll-ms', 100, 3_600_000))
    .option(
      '--shutdown-ms <ms>',
      'on SIGTERM/SIGINT, wait at most this long for receipts (default 30000)',
      intOption('--shutdown-ms', 0, 600_000),
    )
    .action(
      action(async (flags: WatchFlags, cmd: Command) => {
        if (flags.pack !== undefined && !['json', 'subject', 'none', 'dense'].includes(flags.pack)) {
          throw new UsageError(`--pack must be json, subject, none or dense, got ${quoteInput(flags.pack)}`);
        }
        const everyMs = parseDuration('--every', flags.every);
        if (everyMs < 1_000) throw new UsageError('--every must be at least 1s');
        const statusEveryMs = parseDuration('--status-every', flags.statusEvery);
        const keepJournalsMs =
          flags.keepJournals === 'all' ? null : parseDuration('--keep-journals', flags.keepJournals);
        const evals = parseEvalList(flags.evals);
        if (flags.scienceBank) inputFileFlag('--science-bank', flags.scienceBank);
        const json = globals(cmd).json === true;
        const [{ watchRegistry }, { startStatusServer, statusLine }] = await Promise.all([
          import('../watch/watch-registry.js'),
          import('../watch/status.js'),
        ]);
        const controller = new AbortController();
        let signals = 0;
        const onSignal = (sig: NodeJS.Signals) => {
          signals++;
          // A second signal quits at once: the journal is safe, a restart resends what was not confirmed.
          if (signals > 1) process.exit(sig === 'SIGINT' ? 130 : 143);
          note(
            `\nhcs25 watch: ${sig}: stopping — flushing packs and waiting for receipts (${sig} again to quit at once; nothing is lost)`,
          );
          controller.abort(new Error('stopped'));
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        const status = new StatusLine(process.stderr, !json && process.stderr.isTTY === true);
        let timer: NodeJS.Timeout | undefined;
        let server: { port: number; close(): Promise<void> } | undefined;
        try {
          const result = await withClient(
            cmd,
            {
              registry: flags.registry,
              topic: flags.topic,
              concurrency: flags.concurrency,
              budgetMs: flags.budgetMs,
              stateDir: flags.stateDir,
              ...(flags.allowPrivateEndpoints ? { allowPrivateEndpoints: true } : {}),
            },
            (client) => {
              const registry = flags.registry ?? client.config.registry;
              const topic = flags.topic ?? client.config.topic;
              if (!registry) throw new UsageError('watch needs a registry: --registry ID (or HCS25_REGISTRY)');
              if (!topic)
                throw new UsageError('watch needs a signal topic: --topic ID (or HCS25_TOPIC)', {
                  hint: 'create one with `hcs25 topic create`',
                });
              return watchRegistry(client, {
                registry,
                topic: entityIdFlag('--topic', topic),
                everyMs,
                evals,
                ...(flags.perHost !== undefined && { perHost: flags.perHost }),
                ...(flags.maxFeePerDay !== undefined && { maxFeePerDayHbar: flags.maxFeePerDay }),
                ...(flags.maxRunSignals !== undefined && { maxRunSignals: flags.maxRunSignals }),
                ...(flags.pack && { pack: flags.pack as 'json' | 'subject' | 'none' | 'dense' }),
                ...(flags.keepResponses && { keepResponses: true }),
                keepJournalsMs,
                ...(flags.grader && { grader: parseGraderId(flags.grader) }),
                ...(flags.scienceBank && { scienceBank: flags.scienceBank }),
                ...(flags.force && { force: true }),
                grpc: flags.grpc,
                ...(flags.pollMs !== undefined && { pollMs: flags.pollMs }),
                ...(flags.shutdownMs !== undefined && { shutdownMs: flags.shutdownMs }),
                hcs10: hcs10Parameters(flags),
                signal: controller.signal,
                onNote: (line) => {
                  if (!json) status.note(line);
                },
                onReady: async (current) => {
                  if (flags.statusPort !== undefined) {
                    server = await startStatusServer(flags.statusPort, current);
                    if (!json) note(`status: http://127.0.0.1:${server.port}/healthz and /metrics`);
                  }
                  if (json) return;
                  const draw = () => status.draw(statusLine(current()));
                  draw();
                  timer = setInterval(draw, process.stderr.isTTY ? 1_000 : statusEveryMs);
                  timer.unref();
                },
              });
            },
          );
          status.end();
          if (json) printJson(result);
          else
            note(
              `hcs25 watch: stopped — ${result.status.counters.evaluations} evaluations, ${result.status.counters.signalsPublished} signals published; runs: ${result.runs.join(', ') || 'none'}`,
            );
          return EXIT_OK;
        } finally {
          clearInterval(timer);
          await server?.close();
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }),
    );
  hcs10Options(cmd);
}
