import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { ReadSignal, RejectedMessage } from '../consumer/types.js';
import { addSourceOptions, readFilters, withSource, type SourceFlags } from './consumer-options.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface SignalsFlags extends SourceFlags {
  jsonl?: boolean;
  follow?: boolean;
  rejected?: boolean;
}

export function register(program: Command): void {
  addSourceOptions(
    program
      .command('signals')
      .description('read and validate HCS-25 signals from a topic on the mirror node')
      .addHelpText(
        'after',
        '\nRejected messages (bad JSON, schema mismatch, unknown version, publisher not allowed, duplicate) are counted on\n' +
          'stderr; --rejected lists them, --json/--jsonl include them with their reasons.',
      ),
  )
    .option('--jsonl', 'one JSON object per line, signals and rejections, streamed')
    .option('--follow', 'keep reading new messages as they arrive (Ctrl-C to stop)')
    .option('--rejected', 'list each rejected message with its reason')
    .action(
      action(async (flags: SignalsFlags, cmd: Command) => {
        const json = globals(cmd).json === true;
        if (json && flags.jsonl) throw new UsageError('--json and --jsonl cannot be combined');
        if (json && flags.follow) throw new UsageError('--follow streams: use --jsonl instead of --json');
        const { readSignals } = await import('../actions/read-signals.js');
        const { renderSignalHeader, renderSignalLine, renderRejectedLine } = await import('../consumer/table.js');
        await withSource(cmd, flags, async (client, source) => {

        const abort = new AbortController();
        const onSigint = (): void => abort.abort();
        if (flags.follow) process.once('SIGINT', onSigint);
        // Whole lists only for --json; a followed topic can run for days, so otherwise only counts are kept.
        const signals: ReadSignal[] = [];
        const rejected: RejectedMessage[] = [];
        const reasons: Record<string, number> = {};
        let signalCount = 0;
        let lastSequence: number | undefined;
        try {
          if (!json && !flags.jsonl) printLine(renderSignalHeader());
          for await (const event of readSignals(client, { ...readFilters(source, flags), follow: flags.follow === true, signal: abort.signal })) {
            if (event.type === 'signal') {
              signalCount++;
              lastSequence = Math.max(lastSequence ?? 0, event.signal.sequenceNumber);
              if (flags.jsonl) printLine(JSON.stringify({ type: 'signal', ...event.signal }));
              else if (json) signals.push(event.signal);
              else printLine(renderSignalLine(event.signal));
            } else {
              const r = event.rejected;
              reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
              lastSequence = Math.max(lastSequence ?? 0, r.sequenceNumber);
              if (flags.jsonl) printLine(JSON.stringify({ type: 'rejected', ...r }));
              else if (json) rejected.push(r);
              else if (flags.rejected) printLine(renderRejectedLine(r));
            }
          }
        } catch (err) {
          if (!abort.signal.aborted) throw err;
        } finally {
          process.off('SIGINT', onSigint);
        }

        const sortedReasons = Object.fromEntries(Object.entries(reasons).sort(([a], [b]) => (a < b ? -1 : 1)));
        if (json) {
          printJson({
            topic: source.topic,
            mirrorRestUrl: client.network.mirrorRestUrl,
            publishers: { filter: source.publishers.length > 0 ? 'allow-list' : 'none', accounts: source.publishers },
            lastSequence: lastSequence ?? null,
            counts: { signals: signalCount, rejected: sortedReasons },
            signals,
            rejected,
          });
          return;
        }
        const rejectedCount = Object.values(reasons).reduce((a, b) => a + b, 0);
        if (rejectedCount > 0) {
          const list = Object.entries(sortedReasons).map(([r, n]) => `${r} ${n}`).join(', ');
          note(`${signalCount} signal(s); ${rejectedCount} message(s) rejected: ${list}${flags.rejected || flags.jsonl ? '' : ' (--rejected lists them)'}`);
        } else note(`${signalCount} signal(s)`);
        if (lastSequence !== undefined) note(`resume with --after-seq ${lastSequence}`);
        });
      }),
    );
}
