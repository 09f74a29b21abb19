import { createPrivateKey, sign as nodeSign, type KeyObject } from 'node:crypto';
import type { PrivateKey, PublicKey } from '@hashgraph/sdk';

export interface TransactionSigner {
  publicKey: PublicKey;
  sign(message: Uint8Array): Promise<Uint8Array>;
}

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Signs transaction bodies with the operator key. The SDK signs Ed25519 in JavaScript, the largest CPU cost of a
 * submission; node:crypto signs natively, which lets one process keep hundreds of submissions in flight (the registry
 * run, docs/performance.md). ECDSA keys use the SDK's signer.
 */
export function operatorSigner(key: PrivateKey): TransactionSigner {
  const publicKey = key.publicKey;
  if (key.type !== 'ED25519') return { publicKey, sign: async (message) => key.sign(message) };
  let keyObject: KeyObject;
  const der = Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(key.toBytesRaw())]);
  try {
    keyObject = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
  return { publicKey, sign: async (message) => new Uint8Array(nodeSign(null, message, keyObject)) };
}
