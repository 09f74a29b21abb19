let lastMs = Number.NaN;
let lastIso = '';

/**
 * `new Date().toISOString()`, formatted once per millisecond: a registry-scale run stamps several results and journal
 * records within each one.
 */
export function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) lastIso = new Date((lastMs = now)).toISOString();
  return lastIso;
}
