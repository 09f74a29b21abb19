/**
 * Keys and signatures as a consensus node sees them: primitive ED25519 / ECDSA(secp256k1) keys, KeyLists and
 * ThresholdKeys, matched against a transaction's SignatureMap by public-key prefix and verified for real.
 * ED25519 goes through node:crypto (native, unlike the SDK's JavaScript verify); ECDSA signs keccak256(bodyBytes).
 */
import { createPublicKey, verify as edVerify, type KeyObject } from 'node:crypto';
import { proto } from '@hashgraph/proto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

export const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
export const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
export const ECDSA_SPKI_PREFIX = Buffer.from('302d300706052b8104000a032200', 'hex');
export const ECDSA_PKCS8_PREFIX = Buffer.from('3030020100300706052b8104000a04220420', 'hex');

const edKeyCache = new Map<string, KeyObject>();

function edKeyObject(raw: Uint8Array): KeyObject {
  const hex = Buffer.from(raw).toString('hex');
  let k = edKeyCache.get(hex);
  if (!k) {
    if (edKeyCache.size > 10_000) edKeyCache.clear();
    k = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
    edKeyCache.set(hex, k);
  }
  return k;
}

function startsWith(key: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length > key.length) return false;
  for (let i = 0; i < prefix.length; i++) if (key[i] !== prefix[i]) return false;
  return true;
}

/**
 * The signatures of one transaction body. Each (key, signature) verification is done at most once, so
 * evaluating a payer key, then a submit key, then an admin key costs one verify per distinct key.
 */
export class SignatureSet {
  private readonly verified = new Map<string, boolean>();
  private keccak: Uint8Array | undefined;

  constructor(
    private readonly bodyBytes: Uint8Array,
    private readonly pairs: proto.ISignaturePair[],
  ) {}

  /** True when some signature pair with a matching prefix verifies for this primitive key. */
  signedBy(kind: 'ed25519' | 'ecdsa', key: Uint8Array): boolean {
    const id = `${kind}:${Buffer.from(key).toString('hex')}`;
    const cached = this.verified.get(id);
    if (cached !== undefined) return cached;
    let ok = false;
    for (const p of this.pairs) {
      const prefix = p.pubKeyPrefix ?? new Uint8Array(0);
      if (!startsWith(key, prefix)) continue;
      if (kind === 'ed25519' && p.ed25519?.length) ok = this.verifyEd(key, p.ed25519);
      else if (kind === 'ecdsa' && p.ECDSASecp256k1?.length) ok = this.verifyEcdsa(key, p.ECDSASecp256k1);
      if (ok) break;
    }
    this.verified.set(id, ok);
    return ok;
  }

  private verifyEd(key: Uint8Array, sig: Uint8Array): boolean {
    if (key.length !== 32 || sig.length !== 64) return false;
    try {
      return edVerify(null, this.bodyBytes, edKeyObject(key), sig);
    } catch {
      return false;
    }
  }

  private verifyEcdsa(key: Uint8Array, sig: Uint8Array): boolean {
    if (sig.length !== 64) return false;
    this.keccak ??= keccak_256(this.bodyBytes);
    try {
      return secp256k1.verify(sig, this.keccak, key, { prehash: false, lowS: false, format: 'compact' });
    } catch {
      return false;
    }
  }
}

/** Whether the signatures satisfy the key (KeyList: all; ThresholdKey: at least `threshold`). */
export function isSatisfied(key: proto.IKey | null | undefined, sigs: SignatureSet): boolean {
  if (!key) return false;
  if (key.ed25519?.length) return sigs.signedBy('ed25519', key.ed25519);
  if (key.ECDSASecp256k1?.length) return sigs.signedBy('ecdsa', key.ECDSASecp256k1);
  if (key.keyList) {
    const keys = key.keyList.keys ?? [];
    return keys.length > 0 && keys.every((k) => isSatisfied(k, sigs));
  }
  if (key.thresholdKey) {
    const t = key.thresholdKey.threshold ?? 0;
    const keys = key.thresholdKey.keys?.keys ?? [];
    if (t < 1 || t > keys.length) return false;
    let n = 0;
    for (const k of keys) if (isSatisfied(k, sigs) && ++n >= t) return true;
    return false;
  }
  // Contract ids, delegatable contract ids, RSA and ECDSA-384 keys cannot sign a HAPI transaction here.
  return false;
}

/** Structural validity as the node checks it before storing a key (BAD_ENCODING / INVALID_*_KEY). */
export function isValidKey(key: proto.IKey | null | undefined, depth = 0): boolean {
  if (!key || depth > 15) return false;
  if (key.ed25519) return key.ed25519.length === 32;
  if (key.ECDSASecp256k1) {
    if (key.ECDSASecp256k1.length !== 33) return false;
    try {
      secp256k1.Point.fromBytes(key.ECDSASecp256k1);
      return true;
    } catch {
      return false;
    }
  }
  if (key.keyList) return (key.keyList.keys ?? []).every((k) => isValidKey(k, depth + 1));
  if (key.thresholdKey) {
    const keys = key.thresholdKey.keys?.keys ?? [];
    const t = key.thresholdKey.threshold ?? 0;
    return t >= 1 && t <= keys.length && keys.every((k) => isValidKey(k, depth + 1));
  }
  return key.contractID != null || key.delegatableContractId != null;
}

/** An empty KeyList is how HAPI says "remove this key" (topic admin/submit keys). */
export function isEmptyKeyList(key: proto.IKey | null | undefined): boolean {
  return !!key?.keyList && (key.keyList.keys?.length ?? 0) === 0;
}

export function keyBytes(key: proto.IKey): Buffer {
  return Buffer.from(proto.Key.encode(key).finish());
}

export function keyFromBytes(bytes: Uint8Array): proto.IKey {
  return proto.Key.decode(bytes);
}

/** The mirror node's JSON form of a key. */
export function keyToMirror(key: proto.IKey | null | undefined): { _type: string; key: string } | null {
  if (!key) return null;
  if (key.ed25519?.length) return { _type: 'ED25519', key: Buffer.from(key.ed25519).toString('hex') };
  if (key.ECDSASecp256k1?.length)
    return { _type: 'ECDSA_SECP256K1', key: Buffer.from(key.ECDSASecp256k1).toString('hex') };
  return { _type: 'ProtobufEncoded', key: keyBytes(key).toString('hex') };
}

/** 20-byte EVM address of a compressed secp256k1 key: keccak256(uncompressed x‖y)[12..]. */
export function evmAddressOf(compressed: Uint8Array): Buffer {
  const uncompressed = secp256k1.Point.fromBytes(compressed).toBytes(false);
  return Buffer.from(keccak_256(uncompressed.subarray(1)).subarray(12));
}

/** Every primitive public key inside a key, depth first (used for fee-exempt and alias lookups). */
export function primitiveKeys(key: proto.IKey | null | undefined, out: proto.IKey[] = []): proto.IKey[] {
  if (!key) return out;
  if (key.ed25519?.length || key.ECDSASecp256k1?.length) out.push(key);
  for (const k of key.keyList?.keys ?? []) primitiveKeys(k, out);
  for (const k of key.thresholdKey?.keys?.keys ?? []) primitiveKeys(k, out);
  return out;
}
