/**
 * Writing registries: create an HCS-2 or HCS-10 registry topic and list agents in it, with the standards-sdk's
 * transaction builders. Used by `hcs25 registry` and by the demo.
 */
import type { Client, PublicKey, TopicCreateTransaction, TopicMessageSubmitTransaction } from '@hashgraph/sdk';
import { Hcs25Error, UsageError } from '../core/errors.js';
import { inscribeHcs1 } from '../hedera/hcs1-write.js';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import { agentRecordSchema, type AgentRecord } from './agent-record.js';
import { parseHcs10RegistryMemo } from './hcs10.js';
import { parseHcs2Memo } from './hcs2.js';
import { zodReason } from './skips.js';
import { parseHrl } from '../core/hrl.js';

export type RegistryWriteKind = 'hcs-2' | 'hcs-10';

export interface CreateRegistryOptions {
  kind: RegistryWriteKind;
  /** HCS-2 only; HCS-10 registries are always indexed. Default true. */
  indexed?: boolean;
  /** Cache TTL written into the memo (default 86400 for hcs-2, 60 for hcs-10). */
  ttl?: number;
  /** Only the operator may write to the registry. */
  submitKey?: boolean;
  /** The operator may update or delete the topic. */
  adminKey?: boolean;
  /** HCS-10: HCS-1 topic holding the registry's own metadata. */
  metadataTopicId?: string;
}

export async function createRegistry(
  client: Client,
  options: CreateRegistryOptions,
): Promise<{ topicId: string; memo: string }> {
  const sdk = await standardsSdk();
  const operatorPublicKey = client.operatorPublicKey ?? undefined;
  const ttl = options.ttl ?? (options.kind === 'hcs-2' ? 86_400 : 60);
  const indexed = options.indexed !== false;
  if (options.kind === 'hcs-10' && !indexed) throw new UsageError('HCS-10 registries are always indexed');
  const keys = { submitKey: options.submitKey === true, adminKey: options.adminKey === true, operatorPublicKey };
  const tx =
    options.kind === 'hcs-2'
      ? sdk.buildHcs2CreateRegistryTx({ registryType: indexed ? 0 : 1, ttl, ...keys })
      : sdk.buildHcs10CreateRegistryTopicTx({
          ttl,
          ...keys,
          ...(options.metadataTopicId && { metadataTopicId: options.metadataTopicId }),
        });
  const receipt = await (await tx.execute(client)).getReceipt(client);
  const topicId = receipt.topicId?.toString();
  if (!topicId) throw new Hcs25Error('LEDGER_TX', 'the registry topic was created but its receipt has no topic id');
  return { topicId, memo: tx.getTopicMemo() ?? '' };
}

/** What to list: exactly one of an agent record, a metadata reference, or an account. */
export type RegistryEntrySource =
  | { record: unknown }
  | { metadata: string }
  | { account: string; inboundTopicId?: string; name?: string };

export interface RegisterOptions {
  registryId: string;
  /** The registry's kind and indexing; see `registryShape` to read them from the topic memo. */
  shape: { kind: RegistryWriteKind; indexed: boolean };
  entry: RegistryEntrySource;
  /** HCS-2 `t_id` (default: the HCS-1 file, else the registry itself). */
  targetTopicId?: string;
  /** The `m` field, at most 500 characters. */
  memo?: string;
  /** Called before a record is inscribed as an HCS-1 file because it does not fit one message. */
  onInscribe?: () => void;
}

export interface Registered {
  sequenceNumber: number;
  transactionId: string;
}

/** HCS-2 analytics memo `hcs-2:op:<op>:<0 indexed|1 non-indexed>` (SHOULD in the spec; the SDK builders leave it to us). */
const hcs2OpMemo = (op: 0 | 1 | 2 | 3, indexed: boolean): string => `hcs-2:op:${op}:${indexed ? 0 : 1}`;
/** One HCS message; larger records go to an HCS-1 file and are registered by reference. */
const MAX_INLINE_BYTES = 1024;
/** Metadata references other than an `hcs://` one (which `parseHrl` reads). */
const URL_REFERENCE = /^(https?:\/\/\S+|data:\S+|ipfs:\/\/\S+|ar:\/\/\S+)$/;

export async function registerAgent(client: Client, options: RegisterOptions): Promise<Registered> {
  if (options.memo !== undefined && options.memo.length > 500)
    throw new UsageError('the registry memo (m) is limited to 500 characters');
  const sdk = await standardsSdk();
  const { entry, registryId } = options;
  let tx: TopicMessageSubmitTransaction;
  if (options.shape.kind === 'hcs-10') {
    if (!('account' in entry)) throw new UsageError('HCS-10 registries list accounts: pass an account id');
    tx = sdk.buildHcs10RegistryRegisterTx({
      registryTopicId: registryId,
      accountId: entry.account,
      ...(entry.inboundTopicId && { inboundTopicId: entry.inboundTopicId }),
      ...(options.memo !== undefined && { memo: options.memo }),
    });
  } else {
    const { metadata, fileTopic } = await hcs2Metadata(client, entry, options.onInscribe);
    tx = sdk.buildHcs2RegisterTx({
      registryTopicId: registryId,
      targetTopicId: options.targetTopicId ?? fileTopic ?? registryId,
      metadata,
      ...(options.memo !== undefined && { memo: options.memo }),
      analyticsMemo: hcs2OpMemo(0, options.shape.indexed),
    });
  }
  const response = await tx.execute(client);
  const receipt = await response.getReceipt(client);
  return {
    sequenceNumber: Number(receipt.topicSequenceNumber?.toString() ?? 0),
    transactionId: response.transactionId.toString(),
  };
}

/** The HCS-2 entry's metadata: a validated record (inline or as an HCS-1 file), a reference, or an hcs-10 record. */
async function hcs2Metadata(
  client: Client,
  entry: RegistryEntrySource,
  onInscribe?: () => void,
): Promise<{ metadata: string; fileTopic?: string }> {
  if ('metadata' in entry) {
    const m = entry.metadata.trim();
    const hrl = parseHrl(m);
    if (hrl === undefined && !URL_REFERENCE.test(m)) {
      throw new UsageError('metadata must be an hcs://, https://, data:, ipfs:// or ar:// reference');
    }
    return { metadata: m, ...(hrl?.standard === 1 && { fileTopic: hrl.topicId }) };
  }
  const record =
    'account' in entry
      ? {
          name: entry.name ?? entry.account,
          protocol: 'hcs-10',
          accountId: entry.account,
          ...(entry.inboundTopicId && { inboundTopicId: entry.inboundTopicId }),
        }
      : entry.record;
  const parsed = agentRecordSchema.safeParse(record);
  if (!parsed.success)
    throw new UsageError(`invalid agent record: ${zodReason(parsed.error)}`, {
      hint: 'see schemas/agent-record.schema.json',
    });
  const inline = JSON.stringify(parsed.data satisfies AgentRecord);
  // The whole register message must fit one chunk; the envelope takes about 80 bytes.
  if (Buffer.byteLength(inline) + 120 <= MAX_INLINE_BYTES) return { metadata: inline };
  onInscribe?.();
  const file = await inscribeHcs1(client, Buffer.from(inline), { mimeType: 'application/json' });
  return { metadata: file.hrl, fileTopic: file.topicId };
}

/** Reads a registry topic's kind and indexing from its memo on the mirror node. */
export async function registryShape(
  topicId: string,
  mirror: MirrorRestClient,
): Promise<{ kind: RegistryWriteKind; indexed: boolean }> {
  const topic = await mirror.getTopic(topicId);
  if (topic === null) {
    throw new UsageError(`registry topic ${topicId} is not on the mirror node`, {
      hint: 'check the id and --network; a new topic can take a few seconds to reach the mirror node (or pass --kind)',
    });
  }
  const hcs2 = parseHcs2Memo(topic.memo);
  if (hcs2) return { kind: 'hcs-2', indexed: hcs2.indexed };
  if (parseHcs10RegistryMemo(topic.memo)) return { kind: 'hcs-10', indexed: true };
  throw new UsageError(`topic ${topicId} is not a registry (memo "${topic.memo.slice(0, 60)}")`, {
    hint: 'pass --kind hcs-2|hcs-10 to write to it anyway',
  });
}

/**
 * The standards-sdk's HCS-2 / HCS-10 transaction builders. Typed locally: the SDK's bundled .d.ts files use
 * extensionless re-exports that NodeNext resolution cannot follow. Imported lazily: the package is slow to load.
 */
interface RegistryTxBuilders {
  buildHcs2CreateRegistryTx(p: {
    registryType: 0 | 1;
    ttl: number;
    submitKey?: boolean;
    adminKey?: boolean;
    operatorPublicKey?: PublicKey;
  }): TopicCreateTransaction;
  buildHcs10CreateRegistryTopicTx(p: {
    ttl: number;
    metadataTopicId?: string;
    submitKey?: boolean;
    adminKey?: boolean;
    operatorPublicKey?: PublicKey;
  }): TopicCreateTransaction;
  buildHcs2RegisterTx(p: {
    registryTopicId: string;
    targetTopicId: string;
    metadata?: string;
    memo?: string;
    analyticsMemo?: string;
  }): TopicMessageSubmitTransaction;
  buildHcs10RegistryRegisterTx(p: {
    registryTopicId: string;
    accountId: string;
    inboundTopicId?: string;
    memo?: string;
  }): TopicMessageSubmitTransaction;
}

async function standardsSdk(): Promise<RegistryTxBuilders> {
  return (await import('@hashgraphonline/standards-sdk')) as unknown as RegistryTxBuilders;
}
