import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { Hcs25Client } from '../client.js';
import type { ReadSignal, RejectedMessage } from '../read/types.js';
import { addSourceOptions, readFilters, withSource, type SourceFlags } from './consumer-options.js';
import { action, exitCodeForStop, globals, note, printJson, printLine } from './shared.js';
import { stringifyForTerminal } from '../core/terminal.js';

interface SignalsFlags extends SourceFlags {
  /** false for --no-names. */
  names?: boolean;
  jsonl?: boolean;
  follow?: boolean;
  rejected?: boolean;
}

/** The entries of `o` for which `test` holds, and the others. */
function partition(
  o: Record<string, number>,
  test: (key: string) => boolean,
): [Record<string, number>, Record<string, number>] {
  const yes: Record<string, number> = {};
  const no: Record<string, number> = {};
  for (const [k, n] of Object.entries(o)) (test(k) ? yes : no)[k] = n;
  return [yes, no];
}

export function register(program: Command): void {
  addSourceOptions(
    program
      .command('signals')
      .description('read and validate HCS-25 signals from a topic on the mirror node')
      .addHelpText(
        'after',
        '\nRejected messages (bad JSON, schema mismatch, publisher not allowed, duplicate; in a pack, each signal alone) are\n' +
          'counted on stderr; --rejected lists them, --json/--jsonl include them with their reasons. Versions, ops, signal\n' +
          'ids, values and fields this version does not know are counted too, never rejected.',
      ),
  )
    .option('--jsonl', 'one JSON object per line, signals and rejections, streamed')
    .option('--follow', 'keep reading new messages as they arrive (Ctrl-C to stop)')
    .option('--rejected', 'list each rejected message with its reason')
    .option('--no-names', 'do not look up agent names in the registries the signals cite')
    .action(
      action(async (flags: SignalsFlags, cmd: Command) => {
        const json = globals(cmd).json === true;
        if (json && flags.jsonl) throw new UsageError('--json and --jsonl cannot be combined');
        if (json && flags.follow) throw new UsageError('--follow streams: use --jsonl instead of --json');
        const { readSignals } = await import('../read/read-signals.js');
        const { signalRow } = await import('../read/reader.js');
        const { renderSignalHeader, renderSignalLine, renderRejectedLine } = await import('../report/table.js');
        // Handlers before the first network call: a user may press Ctrl-C while the topic is being looked up.
        const abort = new AbortController();
        let stoppedBy: NodeJS.Signals | undefined;
        const onStop = (signal: NodeJS.Signals): void => {
          stoppedBy = signal;
          abort.abort();
        };
        if (flags.follow) {
          process.once('SIGINT', onStop);
          process.once('SIGTERM', onStop);
        }
        try {
          return await withSource(cmd, flags, async (client, source) => {
            // Whole lists only for --json; a followed topic can run for days, so otherwise only counts are kept.
            const signals: ReadSignal[] = [];
            const rejected: RejectedMessage[] = [];
            const reasons: Record<string, number> = {};
            // Score and reveal records, and what a later version defines (other versions, ops, signal ids, values,
            // fields): counted, not rejected.
            const records: Record<string, number> = {};
            const unknown: Record<string, number> = {};
            let signalCount = 0;
            let lastSequence: number | undefined;
            const saw = (seq: number) => (lastSequence = Math.max(lastSequence ?? 0, seq));
            const nameOf =
              flags.names === false || json || flags.jsonl ? undefined : await signalNamer(client, abort.signal);
            try {
              if (!json && !flags.jsonl) printLine(renderSignalHeader());
              for await (const event of readSignals(client, {
                ...readFilters(source, flags),
                follow: flags.follow === true,
                signal: abort.signal,
              })) {
                if (event.type === 'signal') {
                  signalCount++;
                  saw(event.signal.sequenceNumber);
                  if (flags.jsonl) printLine(stringifyForTerminal({ type: 'signal', ...signalRow(event.signal) }));
                  else if (json) signals.push(signalRow(event.signal));
                  else printLine(renderSignalLine(event.signal, await nameOf?.(event.signal)));
                } else if (event.type === 'rejected') {
                  const r = event.rejected;
                  reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
                  saw(r.sequenceNumber);
                  if (flags.jsonl) printLine(stringifyForTerminal({ type: 'rejected', ...r }));
                  else if (json) rejected.push(r);
                  else if (flags.rejected) printLine(renderRejectedLine(r));
                } else if (event.type === 'record') {
                  records[event.record.kind] = (records[event.record.kind] ?? 0) + 1;
                  saw(event.record.sequenceNumber);
                  if (flags.jsonl) printLine(stringifyForTerminal({ type: 'record', ...event.record }));
                } else {
                  const key = `${event.unknown.kind}:${event.unknown.name}`;
                  unknown[key] = (unknown[key] ?? 0) + 1;
                  saw(event.unknown.sequenceNumber);
                }
              }
            } catch (err) {
              if (!abort.signal.aborted) throw err;
            }

            const sorted = (o: Record<string, number>) =>
              Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));
            if (json) {
              printJson({
                topic: source.topic,
                mirrorRestUrl: client.network.mirrorRestUrl,
                publishers: {
                  filter: source.publishers.length > 0 ? 'allow-list' : 'none',
                  accounts: source.publishers,
                },
                lastSequence: lastSequence ?? null,
                counts: {
                  signals: signalCount,
                  rejected: sorted(reasons),
                  records: sorted(records),
                  unknown: sorted(unknown),
                },
                signals,
                rejected,
              });
              return exitCodeForStop(stoppedBy);
            }
            const list = (o: Record<string, number>) =>
              Object.entries(sorted(o))
                .map(([r, n]) => `${r} ${n}`)
                .join(', ');
            const rejectedCount = Object.values(reasons).reduce((a, b) => a + b, 0);
            const parts = [`${signalCount} signal(s)`];
            if (Object.keys(records).length > 0) parts.push(`records: ${list(records)}`);
            // Unknown values and fields leave their signal readable (an unknown status aside); the rest is skipped.
            const [inRead, skipped] = partition(
              unknown,
              (key) => /^(value|field):/.test(key) && !key.startsWith('value:status='),
            );
            if (Object.keys(skipped).length > 0) parts.push(`not known to this version (skipped): ${list(skipped)}`);
            if (Object.keys(inRead).length > 0)
              parts.push(`read with what this version does not know: ${list(inRead)}`);
            if (rejectedCount > 0)
              parts.push(
                `${rejectedCount} message(s) rejected: ${list(reasons)}${flags.rejected || flags.jsonl ? '' : ' (--rejected lists them)'}`,
              );
            note(parts.join('; '));
            // Only a read that was stopped has something to resume; a whole one can be followed up from where it ended.
            if (lastSequence !== undefined)
              note(
                stoppedBy
                  ? `resume with --after-seq ${lastSequence}`
                  : `read what arrives later with --after-seq ${lastSequence}`,
              );
            return exitCodeForStop(stoppedBy);
          });
        } finally {
          process.off('SIGINT', onStop);
          process.off('SIGTERM', onStop);
        }
      }),
    );
}

/**
 * Names for a streamed signal list, as `hcs25 scores` shows them: each registry the signals cite is read once, when
 * first cited (at most MAX_NAME_REGISTRIES), and names every agent it lists; one that cannot be read is noted once.
 */
async function signalNamer(client: Hcs25Client, signal: AbortSignal) {
  const { MAX_NAME_REGISTRIES, RegistryCitations, resolveNames } = await import('../read/resolve-names.js');
  const labels: Record<string, string> = {};
  const looked = new Set<string>();
  return async (s: ReadSignal): Promise<string | undefined> => {
    const cited = RegistryCitations.of([s]);
    for (const source of [...cited.bySource.keys()]) {
      if (looked.has(source) || looked.size >= MAX_NAME_REGISTRIES) cited.bySource.delete(source);
      else looked.add(source);
    }
    if (cited.bySource.size > 0) {
      const found = await resolveNames(client, { signals: cited, everyAgent: true, signal });
      Object.assign(labels, found.labels);
      for (const f of found.failed)
        note(`note: names from ${f.source} unavailable (${f.reason}); --no-names skips lookups`);
    }
    return labels[s.message.subject];
  };
}
