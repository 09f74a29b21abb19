/** Create an HCS-25 signal topic (memo `hcs-25:0:86400`, optionally a submit key so only its holder can publish). */
import type { Hcs25Client } from '../client.js';
import { parsePrivateKey } from '../hedera/client.js';
import { createSignalTopic, parsePublicKey, type CreatedTopic } from './topic.js';

export interface CreateTopicParameters {
  /** Default `hcs-25:0:86400`. */
  memo?: string;
  /** A public key (DER or raw ED25519 hex) that must sign every submission. */
  submitKey?: string;
  /** Use the operator's public key as the submit key (only this operator can publish). */
  submitKeyOperator?: boolean;
}

export type CreateTopicReturnType = CreatedTopic;

export async function createTopic(
  client: Hcs25Client,
  parameters: CreateTopicParameters = {},
): Promise<CreateTopicReturnType> {
  const operator = client.requireOperator();
  const submitKey = parameters.submitKeyOperator
    ? parsePrivateKey(operator).publicKey
    : parameters.submitKey
      ? parsePublicKey(parameters.submitKey)
      : undefined;
  return createSignalTopic(await client.connect(), {
    ...(parameters.memo !== undefined && { memo: parameters.memo }),
    ...(submitKey && { submitKey }),
  });
}
