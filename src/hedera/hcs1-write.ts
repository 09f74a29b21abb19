/**
 * HCS-1 writer: inscribes a file (brotli, base64) on a new topic whose memo carries the file's SHA-256, with the
 * operator as submit key and no admin key (the spec's validity rules), one `{"o","c"}` message per chunk.
 * Used for HCS-11 profiles, large HCS-10 payloads and agent records too large for one registry message.
 */
import { formatHrl } from '../core/hrl.js';
import type { Client } from '@hashgraph/sdk';
import { Hcs25Error } from '../core/errors.js';
import { encodeHcs1File } from './hcs1.js';
import { createTopic, submitMessage } from './tx.js';

export interface InscribedFile {
  topicId: string;
  /** `hcs://1/<topicId>` */
  hrl: string;
  /** Messages written. */
  chunks: number;
}

export async function inscribeHcs1(
  client: Client,
  bytes: Uint8Array,
  options: { mimeType: string },
): Promise<InscribedFile> {
  const submitKey = client.operatorPublicKey;
  if (submitKey === null) {
    throw new Hcs25Error('NO_OPERATOR', 'inscribing an HCS-1 file needs an operator', {
      hint: 'configure HCS25_OPERATOR_ID and HCS25_OPERATOR_KEY',
    });
  }
  const encoded = encodeHcs1File(bytes, options.mimeType);
  const topicId = await createTopic(client, { memo: encoded.memo, submitKey });
  // Chunks carry their order (`o`), so they may reach consensus in any order.
  await Promise.all(encoded.messages.map((m) => submitMessage(client, topicId, m, undefined)));
  return { topicId, hrl: formatHrl(1, topicId), chunks: encoded.messages.length };
}
