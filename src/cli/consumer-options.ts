/** Flags and setup shared by `hcs25 signals` and `hcs25 scores` (the mirror-node consumer commands). */
import type { Command } from 'commander';
import type { Hcs25Client } from '../client.js';
import { UsageError } from '../core/errors.js';
import { withClient } from './context.js';
import { collect, intOption, note } from './shared.js';
import { quoteInput } from '../config/secret.js';

export interface SourceFlags {
  topic?: string;
  publisher?: string[];
  subject?: string;
  since?: string;
  until?: string;
  afterSeq?: number;
}

export function addSourceOptions(cmd: Command): Command {
  return cmd
    .option('--topic <id>', 'signal topic (env HCS25_TOPIC)')
    .option(
      '--publisher <account>',
      'trusted publisher (payer account); repeat for more (env HCS25_PUBLISHERS)',
      collect,
    )
    .option('--subject <uaid>', 'only signals about this subject')
    .option('--since <time>', 'only messages at or after this consensus time (ISO 8601)')
    .option('--until <time>', 'only messages at or before this consensus time (ISO 8601)')
    .option(
      '--after-seq <n>',
      'resume: only messages after this sequence number',
      intOption('--after-seq', 0, Number.MAX_SAFE_INTEGER),
    );
}

export interface Source {
  topic: string;
  publishers: string[];
}

/**
 * Runs `fn` with an hcs25 client and the resolved topic and allow-list, after checking the flags and that the mirror
 * node knows the topic.
 */
export async function withSource<T>(
  cmd: Command,
  flags: SourceFlags,
  fn: (client: Hcs25Client, source: Source) => Promise<T>,
): Promise<T> {
  for (const [name, value] of [
    ['--since', flags.since],
    ['--until', flags.until],
  ] as const) {
    if (value !== undefined && Number.isNaN(Date.parse(value)))
      throw new UsageError(`${name} must be an ISO 8601 time, got ${quoteInput(value)}`);
  }
  // An empty window is a mistake, not an empty topic.
  if (flags.since !== undefined && flags.until !== undefined && Date.parse(flags.since) > Date.parse(flags.until))
    throw new UsageError(`--since ${quoteInput(flags.since)} is after --until ${quoteInput(flags.until)}`);
  return withClient(cmd, { topic: flags.topic, publishers: flags.publisher }, async (client) => {
    const { config } = client;
    if (!config.topic)
      throw new UsageError('no signal topic given', { hint: 'pass --topic 0.0.1234 or set HCS25_TOPIC' });
    const { getSignalTopic } = await import('../read/read-signals.js');
    const { isSignalTopicMemo } = await import('../publish/topic.js');
    const info = await getSignalTopic(client, config.topic);
    if (!isSignalTopicMemo(info.memo)) {
      // The memo is whoever created the topic's text: note() shows its escape sequences escaped.
      note(
        `note: topic ${config.topic} has memo "${info.memo.slice(0, 40)}", not an hcs-25 signal-topic memo; reading anyway`,
      );
    }
    if (config.publishers.length === 0) {
      note(
        'warning: no publisher allow-list; signals from any paying account are accepted (use --publisher or HCS25_PUBLISHERS)',
      );
    }
    return fn(client, { topic: config.topic, publishers: config.publishers });
  });
}

/** The reader's filters from the flags. */
export function readFilters(source: Source, flags: SourceFlags) {
  return {
    topic: source.topic,
    publishers: source.publishers,
    ...(flags.subject !== undefined ? { subject: flags.subject } : {}),
    ...(flags.since !== undefined ? { since: flags.since } : {}),
    ...(flags.until !== undefined ? { until: flags.until } : {}),
    ...(flags.afterSeq !== undefined ? { afterSequence: flags.afterSeq } : {}),
  };
}
