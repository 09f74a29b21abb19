/**
 * HCS-10 identities: an account with an inbound topic (`hcs-10:0:60:0:<account>`), an outbound topic
 * (`hcs-10:0:60:1`, only the account may write), an HCS-11 profile inscribed as an HCS-1 file, and the account memo
 * `hcs-11:hcs://1/<profile>`. The runner needs one because a connection request must carry the requester's
 * `operator_id` (`<inbound>@<account>`); the sample agents are built the same way.
 *
 * The runner's identity is the operator account itself (no second key to keep), stored per network and account under
 * the state dir and reused across runs; before reuse it is checked against consensus (not the mirror, which lags).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AccountInfoQuery, TopicInfoQuery, type Client } from '@hashgraph/sdk';
import { z } from 'zod';
import { ConfigError, errorMessage } from '../core/errors.js';
import { inscribeHcs1 } from '../hedera/hcs1-write.js';
import { createTopic, setAccountMemo, type CreateTopicOptions } from '../hedera/tx.js';
import {
  HCS10_TTL_SECONDS,
  formatOperatorId,
  inboundTopicMemo,
  outboundTopicMemo,
  parseHcs10TopicMemo,
} from './messages.js';
import { buildAgentProfile, hcs11AccountMemo, type AgentProfileInput } from './profile.js';
import { entityIdSchema } from '../core/id-schemas.js';

export interface Hcs10Identity {
  accountId: string;
  inboundTopicId: string;
  outboundTopicId: string;
  profileTopicId: string;
}

export function operatorIdOf(identity: Pick<Hcs10Identity, 'accountId' | 'inboundTopicId'>): string {
  return formatOperatorId(identity.inboundTopicId, identity.accountId);
}

export interface ProvisionOptions extends Omit<AgentProfileInput, 'inboundTopicId' | 'outboundTopicId'> {
  /** Inbound topic access: default public (no submit key). */
  inbound?: Pick<CreateTopicOptions, 'submitKey' | 'fees' | 'feeScheduleKey'>;
  ttl?: number;
}

/**
 * Makes the client's operator account an HCS-10 agent: 4 + n transactions (two topics, the profile file topic and
 * its n chunks, the account memo). Returns the ids and the profile written.
 */
export async function provisionHcs10Agent(
  client: Client,
  options: ProvisionOptions,
): Promise<{ identity: Hcs10Identity; profile: Record<string, unknown> }> {
  const accountId = client.operatorAccountId?.toString();
  const key = client.operatorPublicKey;
  if (!accountId || !key) throw new ConfigError('an HCS-10 identity needs a client with an operator account');
  const ttl = options.ttl ?? HCS10_TTL_SECONDS;
  const [inboundTopicId, outboundTopicId] = await Promise.all([
    createTopic(client, { memo: inboundTopicMemo(accountId, ttl), ...options.inbound }),
    createTopic(client, { memo: outboundTopicMemo(ttl), submitKey: key }),
  ]);
  const { inbound: _inbound, ttl: _ttl, ...profileInput } = options;
  const profile = buildAgentProfile({ ...profileInput, inboundTopicId, outboundTopicId });
  const file = await inscribeHcs1(client, Buffer.from(JSON.stringify(profile)), { mimeType: 'application/json' });
  await setAccountMemo(client, accountId, hcs11AccountMemo(file.topicId));
  return { identity: { accountId, inboundTopicId, outboundTopicId, profileTopicId: file.topicId }, profile };
}

// ---------- the runner's stored identity ----------

const entityId = entityIdSchema;
const storedIdentitySchema = z.object({
  network: z.string(),
  accountId: entityId,
  inboundTopicId: entityId,
  outboundTopicId: entityId,
  profileTopicId: entityId,
  displayName: z.string(),
  createdAt: z.string(),
});
export type StoredIdentity = z.infer<typeof storedIdentitySchema>;
const identityFileSchema = z.object({ version: z.literal(1), identities: z.record(z.string(), storedIdentitySchema) });

export const IDENTITY_FILE = 'hcs10-identity.json';

export function identityFile(stateDir: string): string {
  return join(stateDir, IDENTITY_FILE);
}

function storeKey(network: string, accountId: string): string {
  return `${network}/${accountId}`;
}

function readIdentityFile(stateDir: string): z.infer<typeof identityFileSchema> {
  const file = identityFile(stateDir);
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, identities: {} };
    throw new ConfigError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let parsed: ReturnType<typeof identityFileSchema.safeParse> | undefined;
  try {
    parsed = identityFileSchema.safeParse(JSON.parse(raw));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success) {
    throw new ConfigError(`${file} is not a valid hcs25 identity file`, {
      hint: 'delete it and run `hcs25 identity create` again',
    });
  }
  return parsed.data;
}

export function loadIdentity(stateDir: string, network: string, accountId: string): StoredIdentity | undefined {
  return readIdentityFile(stateDir).identities[storeKey(network, accountId)];
}

export function saveIdentity(stateDir: string, identity: StoredIdentity): void {
  const data = readIdentityFile(stateDir);
  data.identities[storeKey(identity.network, identity.accountId)] = identity;
  const file = identityFile(stateDir);
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`);
  renameSync(tmp, file);
}

export interface IdentityCheck {
  ok: boolean;
  problems: string[];
}

/** Whether a stored identity still holds on the ledger: both topics exist with their memos, the account memo points at the profile. */
export async function checkIdentity(client: Client, identity: Hcs10Identity): Promise<IdentityCheck> {
  const problems: string[] = [];
  const topicMemo = async (topicId: string): Promise<string | null> => {
    try {
      const info = await new TopicInfoQuery().setTopicId(topicId).execute(client);
      return info.topicMemo;
    } catch (err) {
      problems.push(`topic ${topicId}: ${errorMessage(err)}`);
      return null;
    }
  };
  const [inMemo, outMemo] = await Promise.all([
    topicMemo(identity.inboundTopicId),
    topicMemo(identity.outboundTopicId),
  ]);
  const inbound = inMemo === null ? null : parseHcs10TopicMemo(inMemo);
  if (inMemo !== null && (inbound?.type !== 'inbound' || inbound.accountId !== identity.accountId)) {
    problems.push(
      `inbound topic ${identity.inboundTopicId} has memo "${inMemo.slice(0, 60)}", not an inbound memo for ${identity.accountId}`,
    );
  }
  if (outMemo !== null && parseHcs10TopicMemo(outMemo)?.type !== 'outbound') {
    problems.push(`outbound topic ${identity.outboundTopicId} has memo "${outMemo.slice(0, 60)}"`);
  }
  try {
    const account = await new AccountInfoQuery().setAccountId(identity.accountId).execute(client);
    const want = hcs11AccountMemo(identity.profileTopicId);
    if (account.accountMemo !== want)
      problems.push(`account memo of ${identity.accountId} is "${account.accountMemo.slice(0, 60)}", not "${want}"`);
  } catch (err) {
    problems.push(`account ${identity.accountId}: ${errorMessage(err)}`);
  }
  return { ok: problems.length === 0, problems };
}

export interface EnsureIdentityOptions {
  client: Client;
  stateDir: string;
  /** Network name the identity is stored under (`local`, `testnet`, …). */
  network: string;
  displayName?: string;
  /** Make a new identity even when a stored one still holds. */
  force?: boolean;
  /** Overwrite an account memo we did not write (another HCS-11 profile, anything else). Default false: refuse. */
  replaceMemo?: boolean;
  /** Called with what is happening (stderr notes in the CLI). */
  onProgress?: (line: string) => void;
}

export const DEFAULT_RUNNER_NAME = 'hcs25 eval runner';

/** The runner's identity: the stored one when it still holds on the ledger, else a new one (stored). */
export async function ensureRunnerIdentity(
  options: EnsureIdentityOptions,
): Promise<{ identity: StoredIdentity; created: boolean }> {
  const { client } = options;
  const accountId = client.operatorAccountId?.toString();
  if (!accountId) throw new ConfigError('an HCS-10 identity needs an operator account');
  const stored = loadIdentity(options.stateDir, options.network, accountId);
  if (stored && !options.force) {
    const check = await checkIdentity(client, stored);
    if (check.ok) return { identity: stored, created: false };
    options.onProgress?.(`stored HCS-10 identity no longer holds (${check.problems[0]}); creating a new one`);
  }
  // The memo is the account's public profile pointer; never overwrite someone else's without being told to.
  const current = (await new AccountInfoQuery().setAccountId(accountId).execute(client)).accountMemo;
  const ours = stored ? hcs11AccountMemo(stored.profileTopicId) : undefined;
  if (current !== '' && current !== ours && !options.replaceMemo) {
    throw new ConfigError(
      `the memo of ${accountId} is "${current.slice(0, 60)}"; making it an HCS-10 identity would replace it with hcs-11:hcs://1/…`,
      {
        hint: 'pass --replace-memo to replace it, or use another operator account',
      },
    );
  }
  const displayName = options.displayName ?? DEFAULT_RUNNER_NAME;
  options.onProgress?.(
    `creating the HCS-10 identity of ${accountId}: inbound and outbound topics, HCS-11 profile, account memo`,
  );
  const { identity } = await provisionHcs10Agent(client, {
    displayName,
    bio: 'Evaluates AI agents and publishes HCS-25 trust signals.',
    capabilities: [7, 16],
    agentType: 1,
    model: 'none',
    creator: 'hcs25',
  });
  const record: StoredIdentity = {
    network: options.network,
    ...identity,
    displayName,
    createdAt: new Date().toISOString(),
  };
  saveIdentity(options.stateDir, record);
  return { identity: record, created: true };
}
