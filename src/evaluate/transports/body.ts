import { TransportError, type HttpResponse } from '../../net/http-client.js';

/** Agents answer HTML error pages with status 200 surprisingly often (proxies, catch-all routes). */
export function looksLikeHtml(res: HttpResponse): boolean {
  if (res.contentType === 'text/html' || res.contentType === 'application/xhtml+xml') return true;
  return /^\s*<(!doctype|html|head|body)\b/i.test(res.body.slice(0, 200));
}

/** `data:` payloads of a text/event-stream body, one string per event; `[DONE]` markers dropped. */
export function sseData(text: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  const flush = () => {
    if (data.length > 0) {
      const joined = data.join('\n');
      if (joined.trim() !== '[DONE]') out.push(joined);
    }
    data = [];
  };
  for (const raw of text.split(/\r?\n/)) {
    if (raw === '') flush();
    else if (raw.startsWith('data:')) data.push(raw.slice(5).replace(/^ /, ''));
    // event:, id:, retry: and comments carry nothing we grade.
  }
  flush();
  return out;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Every JSON value in a reply that should have been one JSON document but may be SSE (`data:` events) or NDJSON
 * (one document per line) — servers stream even when asked not to. Throws `protocol-error` for HTML, empty or
 * non-JSON bodies.
 */
export function decodeJsonMessages(res: HttpResponse, what: string): unknown[] {
  const text = res.body;
  if (text.trim() === '')
    throw new TransportError('protocol-error', `${what}: empty response body`, { httpStatus: res.status });
  if (res.contentType === 'text/event-stream' || /^\s*(data|event|id):/.test(text)) {
    const values = sseData(text)
      .map(tryParse)
      .flatMap((p) => (p.ok ? [p.value] : []));
    if (values.length > 0) return values;
    throw new TransportError('protocol-error', `${what}: event stream without JSON events`, { httpStatus: res.status });
  }
  const whole = tryParse(text);
  if (whole.ok) return [whole.value];
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const parsed = lines.map(tryParse);
  if (lines.length > 1 && parsed.every((p) => p.ok)) return parsed.map((p) => (p as { value: unknown }).value);
  if (looksLikeHtml(res)) {
    throw new TransportError('protocol-error', `${what}: HTML page where JSON was expected`, {
      httpStatus: res.status,
    });
  }
  throw new TransportError(
    'protocol-error',
    `${what}: response is not JSON (${res.contentType || 'no content type'})`,
    {
      httpStatus: res.status,
    },
  );
}

/** Removes `<think>…</think>` reasoning blocks (and an unclosed trailing one) that some models put in the answer. */
export function stripThinking(text: string): string {
  return text
    .replace(/<think(?:ing)?>[\s\S]*?<\/think(?:ing)?>/gi, '')
    .replace(/<think(?:ing)?>[\s\S]*$/i, '')
    .trim();
}
