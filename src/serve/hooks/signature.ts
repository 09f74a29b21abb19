/**
 * How a delivery is signed: HMAC-SHA256 with the hook's secret over `<timestamp>.<body>` (the timestamp is the
 * `X-Hcs25-Timestamp` header, Unix seconds), sent as `X-Hcs25-Signature: sha256=<hex>`. Signing the timestamp with
 * the body lets a receiver refuse an old delivery replayed to it (docs/serve.md, "Webhooks").
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-hcs25-signature';
export const TIMESTAMP_HEADER = 'x-hcs25-timestamp';
export const DELIVERY_HEADER = 'x-hcs25-delivery';
export const EVENT_HEADER = 'x-hcs25-event';

export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * A receiver's check, in constant time: the signature matches and the timestamp is within `toleranceSeconds` of
 * `nowSeconds`.
 */
export function verifyDelivery(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (headers.signature === undefined || headers.timestamp === undefined || !/^\d{1,12}$/.test(headers.timestamp))
    return false;
  const timestamp = Number(headers.timestamp);
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(signDelivery(secret, timestamp, body));
  const given = Buffer.from(headers.signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
