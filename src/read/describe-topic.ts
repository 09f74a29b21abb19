/**
 * What a topic is, from the ledger alone (`hcs25 topic describe`): its memo read as a format-3 signal topic (and the
 * definition file it names, fetched and parsed), an old hcs-25 signal topic, an HCS-2 registry, an HCS-10 topic or an
 * HCS-1 file; who can publish; how many messages it holds; and the formats of its first page of messages.
 */
import type { Hcs25Client } from '../client.js';
import { consensusIso } from '../core/consensus-time.js';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import { formatHrl } from '../core/hrl.js';
import { isEntityId } from '../core/ids.js';
import { parseHcs2Memo } from '../discover/hcs2.js';
import { readMessage } from '../format/read.js';
import { parseHcs10TopicMemo } from '../hcs10/messages.js';
import { parseHcs1Memo, readHcs1File } from '../hedera/hcs1.js';
import type { TopicInfo, TopicMessage } from '../hedera/mirror-rest.js';
import { parseFormatDefinition } from '../format/definition.js';
import { FORMAT_ID_V3 } from '../format/schema-v3.js';
import { parseSignalTopicMemo } from '../publish/topic.js';

export interface DescribeTopicParameters {
  /** Topic id, `0.0.1234`. */
  topic: string;
  /** Messages of the first page whose formats are counted (the mirror node's page, at most 100). Default 100. */
  sampleSize?: number;
  signal?: AbortSignal;
}

/**
 * `format-3`: an hcs25 signal topic of format 3; `format-other`: an hcs25 format this version does not know;
 * `old-format`: an hcs-25:0:{ttl} signal topic (formats v1/v2); then topics of other standards; `unknown`.
 */
export type TopicKind = 'format-3' | 'format-other' | 'old-format' | 'hcs-2' | 'hcs-10' | 'hcs-1' | 'unknown';

export interface TopicSchemaFileDescription {
  topicId: string;
  /** `hcs://1/<topicId>` */
  hrl: string;
  /** From the file, when it was read and is a format definition. */
  format?: string;
  title?: string;
  docs?: string;
  /** Op names with a JSON Schema in the file. */
  schemas?: string[];
  sha256?: string;
  /** Why the file could not be used (missing, not HCS-1, not a definition). */
  problem?: string;
}

export interface DescribeTopicReturnType {
  topicId: string;
  memo: string;
  kind: TopicKind;
  /** What the topic is, one line. */
  what: string;
  /** The signal format the memo names: `hcs25-tool/3`, or `hcs-25 v1/v2` for an old-form memo. */
  format?: string;
  /** The ttl of an `hcs-25:0:{ttl}` or registry memo, seconds. */
  ttl?: number;
  schemaFile?: TopicSchemaFileDescription;
  /** `ED25519:<hex>`; null when anyone may submit. */
  submitKey: string | null;
  /** Null when nobody can update or delete the topic. */
  adminKey: string | null;
  deleted: boolean;
  /** ISO time the topic was created, when the mirror node says. */
  created?: string;
  messages: { count: number; first?: string; last?: string };
  /** The first page of messages by format (`hcs25-tool/3`, `hcs-25 v2`, `hcs-25 v2 (zlib)`, `not hcs-25`, …). */
  sample: { messages: number; formats: Record<string, number> };
}

export async function describeTopic(
  client: Hcs25Client,
  parameters: DescribeTopicParameters,
): Promise<DescribeTopicReturnType> {
  const { topic, signal } = parameters;
  if (!isEntityId(topic)) {
    throw new UsageError(`the topic must be an id like 0.0.1234, got "${topic.slice(0, 40)}"`);
  }
  const mirror = client.mirror;
  const info = await mirror.getTopic(topic, signal);
  if (info === null) {
    throw new Hcs25Error(
      'TOPIC_NOT_FOUND',
      `the mirror node at ${client.network.mirrorRestUrl} does not know topic ${topic}`,
      {
        hint: 'check the id and --network (a new topic can take a few seconds to reach the mirror node)',
      },
    );
  }
  const [last, firstPage] = await Promise.all([
    mirror.lastTopicMessage(topic, signal),
    firstMessages(client, topic, Math.min(Math.max(parameters.sampleSize ?? 100, 1), 100), signal),
  ]);
  const memo = classifyMemo(info.memo);
  const schemaFile =
    memo.schemaFile === undefined ? undefined : await describeSchemaFile(client, memo.schemaFile, signal);
  const formats: Record<string, number> = {};
  for (const m of firstPage) {
    const label = messageFormat(m.message);
    formats[label] = (formats[label] ?? 0) + 1;
  }
  const first = firstPage[0];
  return {
    topicId: info.topic_id,
    memo: info.memo,
    kind: memo.kind,
    what: memo.what,
    ...(memo.format !== undefined && { format: memo.format }),
    ...(memo.ttl !== undefined && { ttl: memo.ttl }),
    ...(schemaFile && { schemaFile }),
    submitKey: keyText(info.submit_key),
    adminKey: keyText(info.admin_key),
    deleted: info.deleted === true,
    ...(info.created_timestamp && { created: consensusIso(info.created_timestamp) }),
    messages: {
      count: last?.sequenceNumber ?? 0,
      ...(first && { first: consensusIso(first.consensusTimestamp) }),
      ...(last && { last: consensusIso(last.consensusTimestamp) }),
    },
    sample: { messages: firstPage.length, formats },
  };
}

interface MemoReading {
  kind: TopicKind;
  what: string;
  format?: string;
  ttl?: number;
  schemaFile?: string;
}

/** What a topic memo says the topic is. */
export function classifyMemo(memo: string): MemoReading {
  const signals = parseSignalTopicMemo(memo);
  if (signals?.form === 'hcs25-tool') {
    const format = `hcs25-tool/${signals.version}`;
    const file = signals.schemaFile === undefined ? {} : { schemaFile: signals.schemaFile };
    if (format === FORMAT_ID_V3) {
      return {
        kind: 'format-3',
        what: `hcs25 signal topic, format ${format}${signals.schemaFile ? '' : ' (its memo names no schema file)'}`,
        format,
        ...file,
      };
    }
    return {
      kind: 'format-other',
      what: `hcs25 signal topic of format ${format}, which this version of hcs25 does not know (it knows ${FORMAT_ID_V3})`,
      format,
      ...file,
    };
  }
  if (signals?.form === 'hcs-25') {
    return {
      kind: 'old-format',
      what: `hcs-25 signal topic of the old form (memo hcs-25:0:{ttl}; messages in formats v1/v2, read by hcs25 but not written any more)`,
      format: 'hcs-25 v1/v2',
      ttl: signals.ttl,
    };
  }
  const hcs2 = parseHcs2Memo(memo);
  if (hcs2) {
    return {
      kind: 'hcs-2',
      what: `HCS-2 registry (${hcs2.indexed ? 'indexed' : 'non-indexed'}): agent registrations, not signals`,
      ttl: hcs2.ttl,
    };
  }
  const hcs10 = parseHcs10TopicMemo(memo);
  if (hcs10) {
    const of =
      hcs10.type === 'inbound'
        ? ` of account ${hcs10.accountId}`
        : hcs10.type === 'connection'
          ? ` (connection ${hcs10.connectionId} with inbound topic ${hcs10.inboundTopicId})`
          : '';
    return { kind: 'hcs-10', what: `HCS-10 ${hcs10.type} topic${of}`, ttl: hcs10.ttl };
  }
  if (parseHcs1Memo(memo)) return { kind: 'hcs-1', what: 'HCS-1 file (read it with its hcs://1/ reference)' };
  return { kind: 'unknown', what: 'not a topic of a standard hcs25 knows (no signal, registry, HCS-10 or HCS-1 memo)' };
}

/** The first page of whole messages (no second page is asked for: the sample is only to say what is there). */
async function firstMessages(
  client: Hcs25Client,
  topic: string,
  size: number,
  signal: AbortSignal | undefined,
): Promise<TopicMessage[]> {
  const out: TopicMessage[] = [];
  for await (const m of client.mirror.topicMessages(topic, {
    pageSize: size,
    limit: size,
    beforeSequence: size + 1,
    ...(signal && { signal }),
  })) {
    out.push(m);
  }
  return out;
}

/** Reads the definition file a memo names; a file that cannot be used is described, not thrown. */
async function describeSchemaFile(
  client: Hcs25Client,
  topicId: string,
  signal: AbortSignal | undefined,
): Promise<TopicSchemaFileDescription> {
  const hrl = formatHrl(1, topicId);
  try {
    const file = await readHcs1File(client.mirror, topicId, { ...(signal && { signal }) });
    const definition = parseFormatDefinition(file.bytes, `HCS-1 file ${hrl}`);
    return {
      topicId,
      hrl,
      format: definition.format,
      ...(definition.title !== undefined && { title: definition.title }),
      ...(definition.docs !== undefined && { docs: definition.docs }),
      schemas: Object.keys(definition.schemas).sort(),
      sha256: file.sha256,
    };
  } catch (err) {
    if (!(err instanceof Hcs25Error) || err.code !== 'HCS1_INVALID') throw err;
    return { topicId, hrl, problem: errorMessage(err) };
  }
}

/** The format of one message, as the reader sees it. */
export function messageFormat(body: Buffer): string {
  const read = readMessage(body);
  if (!read.ok) return read.reason === 'not-hcs25' ? 'not hcs-25' : `malformed (${read.reason})`;
  const zlib = read.encoding === 'zlib' ? ' (zlib)' : '';
  for (const item of read.items) {
    const v =
      item.kind === 'signal'
        ? (item.message as { v?: unknown }).v
        : item.kind === 'score' || item.kind === 'reveal'
          ? item.v
          : undefined;
    if (typeof v === 'number') return `${v >= 3 ? `hcs25-tool/${v}` : `hcs-25 v${v}`}${zlib}`;
  }
  const version = read.items.find((i) => i.kind === 'unknown' && i.unknown === 'version');
  return version?.kind === 'unknown' ? `unknown version ${version.name}` : `hcs-25, unknown op or signal${zlib}`;
}

function keyText(key: TopicInfo['submit_key']): string | null {
  return key ? `${key._type}:${key.key}` : null;
}
