/**
 * `view`'s bytes in an ArrayBuffer of exactly their size. A small Buffer is usually a window on a larger one (Node's
 * 8 KiB allocation pool; zlib's 16 KiB output chunk), and a window keeps all of it alive and is cloned whole when
 * posted to a worker thread: a 600-byte message held in flight or sent to the submission worker cost 8-16 KiB.
 */
export function ownBytes(view: Uint8Array): Buffer {
  if (Buffer.isBuffer(view) && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength) return view;
  const out = Buffer.allocUnsafeSlow(view.byteLength);
  out.set(view);
  return out;
}
