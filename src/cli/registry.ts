import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { ConfigError, Hcs25Error, UsageError, errorMessage } from '../errors.js';
import { action, globals, intOption, note, printJson, printLine } from './shared.js';

type Kind = 'hcs-2' | 'hcs-10';

interface CreateFlags {
  kind: Kind;
  /** undefined unless --indexed / --no-indexed was given (commander sets no default when both exist). */
  indexed?: boolean;
  ttl?: number;
  submitKey?: boolean;
  adminKey?: boolean;
  metadataTopic?: string;
}

interface RegisterFlags {
  registry: string;
  record?: string;
  metadata?: string;
  account?: string;
  inbound?: string;
  name?: string;
  target?: string;
  memo?: string;
  kind?: Kind;
}

/** HCS-2 analytics memo `hcs-2:op:<op>:<0 indexed|1 non-indexed>` (SHOULD in the spec; the SDK builders leave it to us). */
const hcs2OpMemo = (op: 0 | 1 | 2 | 3, indexed: boolean): string => `hcs-2:op:${op}:${indexed ? 0 : 1}`;
/** One HCS message; larger records go to an HCS-1 file and are registered by reference. */
const MAX_INLINE_BYTES = 1024;

export function register(program: Command): void {
  const registry = program.command('registry').description('create an HCS-2 or HCS-10 registry topic and register agents in it');

  registry
    .command('create')
    .description('create a registry topic (prints its id)')
    .requiredOption('--kind <kind>', 'hcs-2 | hcs-10', kindOption)
    .option('--indexed', 'HCS-2: every message counts (the default)')
    .option('--no-indexed', 'HCS-2: only the latest message counts')
    .option('--ttl <seconds>', 'cache TTL written into the memo (default 86400 for hcs-2, 60 for hcs-10)', intOption('--ttl', 1, 31_536_000))
    .option('--submit-key', 'only the operator may write to the registry (default: anyone may)')
    .option('--admin-key', 'the operator may update or delete the topic')
    .option('--metadata-topic <id>', 'HCS-10: HCS-1 topic with the registry metadata')
    .action(
      action(async (flags: CreateFlags, cmd: Command) => {
        const g = globals(cmd);
        const { client, close } = await operatorClient(g);
        try {
          const sdk = await standardsSdk();
          const operatorPublicKey = client.operatorPublicKey ?? undefined;
          const ttl = flags.ttl ?? (flags.kind === 'hcs-2' ? 86_400 : 60);
          const indexed = flags.indexed !== false;
          if (flags.kind === 'hcs-10' && !indexed) throw new UsageError('HCS-10 registries are always indexed');
          const tx =
            flags.kind === 'hcs-2'
              ? sdk.buildHcs2CreateRegistryTx({ registryType: indexed ? 0 : 1, ttl, submitKey: flags.submitKey === true, adminKey: flags.adminKey === true, operatorPublicKey })
              : sdk.buildHcs10CreateRegistryTopicTx({
                  ttl,
                  submitKey: flags.submitKey === true,
                  adminKey: flags.adminKey === true,
                  operatorPublicKey,
                  ...(flags.metadataTopic && { metadataTopicId: entity(flags.metadataTopic, '--metadata-topic') }),
                });
          const receipt = await (await tx.execute(client)).getReceipt(client);
          const topicId = receipt.topicId?.toString();
          if (!topicId) throw new Hcs25Error('LEDGER_TX', 'the registry topic was created but its receipt has no topic id');
          const memo = tx.getTopicMemo();
          if (g.json) printJson({ topicId, kind: flags.kind, memo });
          else printLine(`${topicId}  (${flags.kind} registry, memo ${memo})`);
        } finally {
          close();
        }
      }),
    );

  registry
    .command('register')
    .description('list an agent in a registry: an agent record (HCS-2), a metadata reference (HCS-2) or an account (HCS-10)')
    .requiredOption('-r, --registry <id>', 'registry topic')
    .option('--record <file>', 'HCS-2: an agent record JSON file (inline, or an HCS-1 file when over 1024 bytes)')
    .option('--metadata <uri>', 'HCS-2: metadata reference (hcs://1/…, https://…, data:…)')
    .option('--account <id>', 'HCS-10: the agent account (its HCS-11 profile describes it); HCS-2: an hcs-10 agent record')
    .option('--inbound <id>', 'HCS-10: the agent inbound topic, written into the registration')
    .option('--name <name>', 'HCS-2 with --account: the record name (default: the account id)')
    .option('--target <id>', 'HCS-2: t_id of the entry (default: the HCS-1 file, else the registry itself)')
    .option('--memo <text>', 'the m field (at most 500 characters)')
    .option('--kind <kind>', 'skip the mirror lookup of the registry memo: hcs-2 | hcs-10', kindOption)
    .action(
      action(async (flags: RegisterFlags, cmd: Command) => {
        const g = globals(cmd);
        const sources = [flags.record, flags.metadata, flags.account].filter((v) => v !== undefined).length;
        if (sources !== 1) throw new UsageError('pass exactly one of --record, --metadata and --account');
        if (flags.memo !== undefined && flags.memo.length > 500) throw new UsageError('--memo is limited to 500 characters');
        const registryId = entity(flags.registry, '--registry');
        const { client, config, close } = await operatorClient(g);
        try {
          const shape = await registryShape(registryId, flags.kind, config.network.mirrorRestUrl);
          const sdk = await standardsSdk();
          const memo = flags.memo;
          let tx;
          if (shape.kind === 'hcs-10') {
            if (!flags.account) throw new UsageError('HCS-10 registries list accounts: pass --account <id>');
            tx = sdk.buildHcs10RegistryRegisterTx({
              registryTopicId: registryId,
              accountId: entity(flags.account, '--account'),
              ...(flags.inbound && { inboundTopicId: entity(flags.inbound, '--inbound') }),
              ...(memo !== undefined && { memo }),
            });
          } else {
            const { metadata, fileTopic } = await hcs2Metadata(flags, client, g.json === true);
            tx = sdk.buildHcs2RegisterTx({
              registryTopicId: registryId,
              targetTopicId: flags.target ? entity(flags.target, '--target') : (fileTopic ?? registryId),
              metadata,
              ...(memo !== undefined && { memo }),
              analyticsMemo: hcs2OpMemo(0, shape.indexed),
            });
          }
          const response = await tx.execute(client);
          const receipt = await response.getReceipt(client);
          const sequenceNumber = Number(receipt.topicSequenceNumber?.toString() ?? 0);
          const out = { registry: registryId, kind: shape.kind, sequenceNumber, transactionId: response.transactionId.toString() };
          if (g.json) printJson(out);
          else printLine(`registered in ${registryId} at #${sequenceNumber} (uid ${sequenceNumber}), transaction ${out.transactionId}`);
        } finally {
          close();
        }
      }),
    );
}

function kindOption(value: string): Kind {
  if (value !== 'hcs-2' && value !== 'hcs-10') throw new UsageError(`--kind must be hcs-2 or hcs-10, got "${value}"`);
  return value;
}

function entity(value: string, flag: string): string {
  const v = value.trim();
  if (!/^\d+\.\d+\.\d+$/.test(v)) throw new UsageError(`${flag} must be an id like 0.0.1234, got "${v.slice(0, 40)}"`);
  return v;
}

/** The HCS-2 entry's metadata: a validated record (inline or as an HCS-1 file), a reference, or an hcs-10 record. */
async function hcs2Metadata(
  flags: RegisterFlags,
  client: import('@hashgraph/sdk').Client,
  quiet: boolean,
): Promise<{ metadata: string; fileTopic?: string }> {
  if (flags.metadata !== undefined) {
    const m = flags.metadata.trim();
    if (!/^(hcs:\/\/\d+\/\d+\.\d+\.\d+|https?:\/\/\S+|data:\S+|ipfs:\/\/\S+|ar:\/\/\S+)$/.test(m)) {
      throw new UsageError('--metadata must be an hcs://, https://, data:, ipfs:// or ar:// reference');
    }
    const file = /^hcs:\/\/1\/(\d+\.\d+\.\d+)$/.exec(m);
    return { metadata: m, ...(file && { fileTopic: file[1]! }) };
  }
  const { agentRecordSchema } = await import('../registry/agent-record.js');
  let record: unknown;
  if (flags.account !== undefined) {
    record = { name: flags.name ?? flags.account, protocol: 'hcs-10', accountId: flags.account, ...(flags.inbound && { inboundTopicId: flags.inbound }) };
  } else {
    try {
      record = JSON.parse(await readFile(flags.record!, 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read agent record ${flags.record}: ${errorMessage(err)}`);
    }
  }
  const parsed = agentRecordSchema.safeParse(record);
  if (!parsed.success) {
    const { zodReason } = await import('../registry/skips.js');
    throw new UsageError(`invalid agent record: ${zodReason(parsed.error)}`, { hint: 'see schemas/agent-record.schema.json' });
  }
  const inline = JSON.stringify(parsed.data);
  // The whole register message must fit one chunk; the envelope takes about 80 bytes.
  if (Buffer.byteLength(inline) + 120 <= MAX_INLINE_BYTES) return { metadata: inline };
  const { inscribeHcs1 } = await import('../hedera/hcs1-write.js');
  if (!quiet) note('the record is larger than one message; inscribing it as an HCS-1 file…');
  const file = await inscribeHcs1(client, Buffer.from(inline), { mimeType: 'application/json' });
  return { metadata: file.hrl, fileTopic: file.topicId };
}

async function registryShape(topicId: string, kind: Kind | undefined, mirrorRestUrl: string): Promise<{ kind: Kind; indexed: boolean }> {
  if (kind) return { kind, indexed: true };
  const [{ MirrorRestClient }, { parseHcs2Memo }, { parseHcs10RegistryMemo }] = await Promise.all([
    import('../hedera/mirror-rest.js'),
    import('../registry/hcs2.js'),
    import('../registry/hcs10.js'),
  ]);
  const mirror = new MirrorRestClient({ baseUrl: mirrorRestUrl, retries: 2 });
  try {
    const topic = await mirror.getTopic(topicId);
    if (topic === null) {
      throw new UsageError(`registry topic ${topicId} is not on the mirror node`, {
        hint: 'check the id and --network; a new topic can take a few seconds to reach the mirror node (or pass --kind)',
      });
    }
    const hcs2 = parseHcs2Memo(topic.memo);
    if (hcs2) return { kind: 'hcs-2', indexed: hcs2.indexed };
    if (parseHcs10RegistryMemo(topic.memo)) return { kind: 'hcs-10', indexed: true };
    throw new UsageError(`topic ${topicId} is not a registry (memo "${topic.memo.slice(0, 60)}")`, { hint: 'pass --kind hcs-2|hcs-10 to write to it anyway' });
  } finally {
    await mirror.close();
  }
}

async function operatorClient(g: ReturnType<typeof globals>) {
  const [{ loadConfig }, { createClient }] = await Promise.all([import('../config/index.js'), import('../hedera/client.js')]);
  const config = loadConfig({ flags: { network: g.network, config: g.config, envFile: g.envFile } });
  if (!config.operator) {
    throw new ConfigError('writing to a registry needs an operator account', { hint: 'set HCS25_OPERATOR_ID and HCS25_OPERATOR_KEY (or HCS25_OPERATOR_KEY_FILE)' });
  }
  const client = createClient(config);
  return { client, config, close: () => client.close() };
}

/**
 * The standards-sdk's HCS-2 / HCS-10 transaction builders. Typed locally: the SDK's bundled .d.ts files use
 * extensionless re-exports that NodeNext resolution cannot follow.
 */
interface RegistryTxBuilders {
  buildHcs2CreateRegistryTx(p: { registryType: 0 | 1; ttl: number; submitKey?: boolean; adminKey?: boolean; operatorPublicKey?: import('@hashgraph/sdk').PublicKey }): import('@hashgraph/sdk').TopicCreateTransaction;
  buildHcs10CreateRegistryTopicTx(p: { ttl: number; metadataTopicId?: string; submitKey?: boolean; adminKey?: boolean; operatorPublicKey?: import('@hashgraph/sdk').PublicKey }): import('@hashgraph/sdk').TopicCreateTransaction;
  buildHcs2RegisterTx(p: { registryTopicId: string; targetTopicId: string; metadata?: string; memo?: string; analyticsMemo?: string }): import('@hashgraph/sdk').TopicMessageSubmitTransaction;
  buildHcs10RegistryRegisterTx(p: { registryTopicId: string; accountId: string; inboundTopicId?: string; memo?: string }): import('@hashgraph/sdk').TopicMessageSubmitTransaction;
}

async function standardsSdk(): Promise<RegistryTxBuilders> {
  return (await import('@hashgraphonline/standards-sdk')) as unknown as RegistryTxBuilders;
}
