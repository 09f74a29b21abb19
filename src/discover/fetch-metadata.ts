/**
 * The one place discovery fetches an http(s) document (metadata, agent cards, profiles). Registries are untrusted,
 * so it goes through the transports' guarded HttpClient: private, loopback and link-local addresses are refused
 * (after DNS, on every redirect) unless allowed, and bodies are capped. Tests inject their own `MetadataFetch`.
 */
import { Hcs25Error } from '../core/errors.js';
import { Deadline } from '../net/deadline.js';
import { HttpClient } from '../net/http-client.js';

export interface FetchedDocument {
  status: number;
  contentType: string;
  body: string;
}

export type MetadataFetch = (
  url: string,
  options: { timeoutMs: number; signal?: AbortSignal },
) => Promise<FetchedDocument>;

export interface GuardedMetadataFetch {
  fetch: MetadataFetch;
  close(): Promise<void>;
}

export function guardedMetadataFetch(options: {
  allowPrivateEndpoints: boolean;
  maxBytes: number;
}): GuardedMetadataFetch {
  const client = new HttpClient({
    allowPrivateEndpoints: options.allowPrivateEndpoints,
    bodyLimitBytes: options.maxBytes,
  });
  return {
    fetch: async (url, { timeoutMs, signal }) => {
      const deadline = new Deadline(timeoutMs, signal);
      try {
        const res = await client.request(url, { method: 'GET', headers: { accept: 'application/json' }, deadline });
        return { status: res.status, contentType: res.contentType, body: res.body };
      } catch (err) {
        if (deadline.timedOut) throw new Hcs25Error('TRANSPORT', `no answer within ${timeoutMs} ms`);
        throw err;
      } finally {
        deadline.dispose();
      }
    },
    close: () => client.close(),
  };
}
