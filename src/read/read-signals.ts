/**
 * Read: a signal topic on the mirror node → validated, allow-listed, deduplicated signals in consensus order, as any
 * consumer reads them (rejected messages come with their reasons). Can resume after a sequence number and follow the
 * topic live.
 */
import type { Hcs25Client } from '../client.js';
import { Hcs25Error } from '../core/errors.js';
import { collectTopicSignals, readTopic, type CollectedSignals, type ReadSignalsOptions } from './reader.js';
import type { TopicEvent } from './types.js';
import type { TopicInfo } from '../hedera/mirror-rest.js';

export type ReadSignalsParameters = Omit<ReadSignalsOptions, 'mirror'>;
/** Signals, score and reveal records, unknown kinds (counted, not errors) and rejected messages, in consensus order. */
export type ReadSignalsReturnType = AsyncGenerator<TopicEvent>;

export function readSignals(client: Hcs25Client, parameters: ReadSignalsParameters): ReadSignalsReturnType {
  return readTopic({ ...parameters, mirror: client.mirror });
}

/** Reads to the end of the topic (never follows) and returns everything at once. */
export function collectSignals(
  client: Hcs25Client,
  parameters: Omit<ReadSignalsParameters, 'follow'>,
): Promise<CollectedSignals> {
  return collectTopicSignals({ ...parameters, mirror: client.mirror });
}

/** The topic as the mirror node knows it, or TOPIC_NOT_FOUND with what to check. */
export async function getSignalTopic(client: Hcs25Client, topic: string): Promise<TopicInfo> {
  const info = await client.mirror.getTopic(topic);
  if (info === null) {
    throw new Hcs25Error(
      'TOPIC_NOT_FOUND',
      `the mirror node at ${client.network.mirrorRestUrl} does not know topic ${topic}`,
      {
        hint: 'check --topic and --network (a new topic can take a few seconds to reach the mirror node)',
      },
    );
  }
  return info;
}
