/**
 * Create a signal topic that describes itself: the format-3 definition (its JSON Schemas) inscribed as an HCS-1 file,
 * or an existing one reused, named in the memo `hcs25-tool/3 hcs://1/<file>`; optionally a submit key so only its
 * holder can publish.
 */
import { AccountBalanceQuery, type Client } from '@hashgraph/sdk';
import type { Hcs25Client } from '../client.js';
import { Hcs25Error, UsageError, errorMessage } from '../core/errors.js';
import { formatHrl, parseHrl } from '../core/hrl.js';
import { parsePrivateKey } from '../hedera/client.js';
import { readHcs1File } from '../hedera/hcs1.js';
import { inscribeHcs1 } from '../hedera/hcs1-write.js';
import { FORMAT_ID_V3 } from '../format/schema-v3.js';
import {
  formatDefinition,
  formatDefinitionBytes,
  parseFormatDefinition,
  type FormatDefinition,
} from '../format/definition.js';
import { nodesOf } from './node-rotation.js';
import { checkTopicMemo, createSignalTopic, formatThreeTopicMemo, parsePublicKey, type CreatedTopic } from './topic.js';

export interface CreateTopicParameters {
  /** The memo, taken as is (no definition file is inscribed). Default `hcs25-tool/3 hcs://1/<definition file>`. */
  memo?: string;
  /** A public key (DER or raw ED25519 hex) that must sign every submission. */
  submitKey?: string;
  /** Use the operator's public key as the submit key (only this operator can publish). */
  submitKeyOperator?: boolean;
  /** Inscribe the format definition and name it in the memo. Default true; false gives the memo `hcs25-tool/3`. */
  inscribeSchemas?: boolean;
  /** An existing definition file (`hcs://1/<topic>`) to name instead of inscribing a new one; it is read and checked. */
  schemaFile?: string;
}

export interface TopicSchemaFile {
  topicId: string;
  /** `hcs://1/<topicId>` */
  hrl: string;
  /** True when this call inscribed it; false when an existing file was named. */
  inscribed: boolean;
  /** Messages the inscription took. */
  chunks?: number;
  /** The op names the file holds a JSON Schema for. */
  schemas: string[];
  /** What the inscription cost, tinybars, from the operator's balance (absent when the balance could not be read). */
  costTinybar?: bigint;
}

export interface CreateTopicReturnType extends CreatedTopic {
  schemaFile?: TopicSchemaFile;
  /** Everything this call paid (file and topic), tinybars, from the operator's balance. */
  costTinybar?: bigint;
}

export async function createTopic(
  client: Hcs25Client,
  parameters: CreateTopicParameters = {},
): Promise<CreateTopicReturnType> {
  const operator = client.requireOperator();
  // Every refusal the user can fix comes before anything is paid for.
  if (parameters.memo !== undefined && parameters.schemaFile !== undefined) {
    throw new UsageError('give --memo or --schemas, not both', {
      hint: 'with --schemas the memo is hcs25-tool/3 followed by that file',
    });
  }
  if (parameters.schemaFile !== undefined && parameters.inscribeSchemas === false) {
    throw new UsageError('give --schemas or --no-schemas, not both');
  }
  if (parameters.memo !== undefined) checkTopicMemo(parameters.memo);
  const reuse = parameters.schemaFile === undefined ? undefined : schemaFileTopic(parameters.schemaFile);
  const submitKey = parameters.submitKeyOperator
    ? parsePrivateKey(operator).publicKey
    : parameters.submitKey
      ? parsePublicKey(parameters.submitKey)
      : undefined;

  const sdk = await client.connect();
  let schemaFile: TopicSchemaFile | undefined;
  if (reuse !== undefined) {
    const definition = await readDefinition(client, reuse);
    schemaFile = { topicId: reuse, hrl: formatHrl(1, reuse), inscribed: false, schemas: schemaNames(definition) };
  }
  const before = await balance(sdk, operator.accountId);
  if (schemaFile === undefined && parameters.memo === undefined && parameters.inscribeSchemas !== false) {
    const definition = formatDefinition();
    const file = await inscribeHcs1(sdk, formatDefinitionBytes(definition), { mimeType: 'application/json' });
    const after = await balance(sdk, operator.accountId);
    schemaFile = {
      topicId: file.topicId,
      hrl: file.hrl,
      inscribed: true,
      chunks: file.chunks,
      schemas: schemaNames(definition),
      ...(before !== undefined && after !== undefined && { costTinybar: before - after }),
    };
  }
  let created: CreatedTopic;
  try {
    created = await createSignalTopic(sdk, {
      memo: parameters.memo ?? formatThreeTopicMemo(schemaFile?.topicId),
      ...(submitKey && { submitKey }),
    });
  } catch (err) {
    if (!schemaFile?.inscribed) throw err;
    // The file is paid for and stays on the ledger: a second attempt can name it instead of inscribing another.
    throw new Hcs25Error(err instanceof Hcs25Error ? err.code : 'LEDGER_TX', errorMessage(err), {
      cause: err,
      hint: `the format definition was inscribed as ${schemaFile.hrl}; try again with --schemas ${schemaFile.hrl} so it is not paid for twice`,
    });
  }
  const after = await balance(sdk, operator.accountId);
  return {
    ...created,
    ...(schemaFile && { schemaFile }),
    ...(before !== undefined && after !== undefined && { costTinybar: before - after }),
  };
}

function schemaFileTopic(reference: string): string {
  const hrl = parseHrl(reference);
  if (hrl === undefined || hrl.standard !== 1) {
    throw new UsageError(
      `--schemas must be an HCS-1 file reference like hcs://1/0.0.1234, got "${reference.slice(0, 60)}"`,
      {
        hint: 'use the hcs://1/ id an earlier `hcs25 topic create` printed for its schema file',
      },
    );
  }
  return hrl.topicId;
}

/** Reads a named definition file and checks that it defines format 3, so the memo never points at something else. */
async function readDefinition(client: Hcs25Client, topicId: string): Promise<FormatDefinition> {
  const file = await readHcs1File(client.mirror, topicId);
  const what = `HCS-1 file ${formatHrl(1, topicId)}`;
  const definition = parseFormatDefinition(file.bytes, what);
  if (definition.format !== FORMAT_ID_V3) {
    throw new Hcs25Error('HCS1_INVALID', `${what} defines ${definition.format}, not ${FORMAT_ID_V3}`, {
      hint: 'leave out --schemas to inscribe the current definition',
    });
  }
  return definition;
}

function schemaNames(definition: FormatDefinition): string[] {
  return Object.keys(definition.schemas).sort();
}

/** The operator's balance, tinybars (a free query); undefined when it cannot be read, as the cost is only reported. */
async function balance(sdk: Client, accountId: string): Promise<bigint | undefined> {
  try {
    const result = await new AccountBalanceQuery()
      .setAccountId(accountId)
      .setNodeAccountIds(nodesOf(sdk).slice(0, 3))
      .execute(sdk, 5_000);
    return BigInt(result.hbars.toTinybars().toString());
  } catch {
    return undefined;
  }
}
