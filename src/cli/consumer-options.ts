/** Flags and setup shared by `hcs25 signals` and `hcs25 scores` (the mirror-node consumer commands). */
import type { Command } from 'commander';
import { Hcs25Error, UsageError } from '../errors.js';
import type { ResolvedConfig } from '../config/load.js';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import { collect, globals, intOption, note } from './shared.js';

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
    .option('--publisher <account>', 'trusted publisher (payer account); repeat for more (env HCS25_PUBLISHERS)', collect)
    .option('--subject <uaid>', 'only signals about this subject')
    .option('--since <time>', 'only messages at or after this consensus time (ISO 8601)')
    .option('--until <time>', 'only messages at or before this consensus time (ISO 8601)')
    .option('--after-seq <n>', 'resume: only messages after this sequence number', intOption('--after-seq', 0, Number.MAX_SAFE_INTEGER));
}

export interface Source {
  config: ResolvedConfig;
  topic: string;
  publishers: string[];
  mirror: MirrorRestClient;
}

/** Resolves config, the topic and the allow-list, and checks that the mirror node knows the topic. */
export async function openSource(cmd: Command, flags: SourceFlags): Promise<Source> {
  const { loadConfig } = await import('../config/load.js');
  const { MirrorRestClient } = await import('../hedera/mirror-rest.js');
  const g = globals(cmd);
  const config = loadConfig({
    flags: { network: g.network, config: g.config, envFile: g.envFile, topic: flags.topic, publishers: flags.publisher },
  });
  if (!config.topic) throw new UsageError('no signal topic given', { hint: 'pass --topic 0.0.1234 or set HCS25_TOPIC' });
  for (const [name, value] of [['--since', flags.since], ['--until', flags.until]] as const) {
    if (value !== undefined && Number.isNaN(Date.parse(value))) throw new UsageError(`${name} must be an ISO 8601 time, got "${value}"`);
  }
  const mirror = new MirrorRestClient({ baseUrl: config.network.mirrorRestUrl });
  const info = await mirror.getTopic(config.topic);
  if (info === null) {
    await mirror.close();
    throw new Hcs25Error('TOPIC_NOT_FOUND', `the mirror node at ${config.network.mirrorRestUrl} does not know topic ${config.topic}`, {
      hint: 'check --topic and --network (a new topic can take a few seconds to reach the mirror node)',
    });
  }
  if (!info.memo.startsWith('hcs-25:')) {
    // The memo is whoever created the topic's text: keep its escape sequences off the operator's terminal.
    const { printable } = await import('../consumer/display.js');
    note(`note: topic ${config.topic} has memo "${printable(info.memo.slice(0, 40))}", not an hcs-25 signal-topic memo; reading anyway`);
  }
  if (config.publishers.length === 0) {
    note('warning: no publisher allow-list; signals from any paying account are accepted (use --publisher or HCS25_PUBLISHERS)');
  }
  return { config, topic: config.topic, publishers: config.publishers, mirror };
}

export function readOptions(source: Source, flags: SourceFlags) {
  return {
    topic: source.topic,
    mirror: source.mirror,
    publishers: source.publishers,
    ...(flags.subject !== undefined ? { subject: flags.subject } : {}),
    ...(flags.since !== undefined ? { since: flags.since } : {}),
    ...(flags.until !== undefined ? { until: flags.until } : {}),
    ...(flags.afterSeq !== undefined ? { afterSequence: flags.afterSeq } : {}),
  };
}
