/**
 * What one client may ask of `hcs25 serve`: URL length, event-stream clients, a per-address request rate, and page
 * sizes. Every list the API returns is a bounded page, so no request does unbounded work.
 */
export interface ServeLimits {
  /** Longest request target (path and query) accepted; longer gets 414. */
  maxUrlLength: number;
  /** Concurrent `/v1/events` clients; more get 503. */
  maxEventClients: number;
  /** Requests per second per client address (token bucket, burst twice that); 0 turns the limit off. */
  requestsPerSecond: number;
  /** Page size when `limit` is not given, and the largest `limit` accepted. */
  defaultPageSize: number;
  maxPageSize: number;
}

export const DEFAULT_LIMITS: ServeLimits = Object.freeze({
  maxUrlLength: 2048,
  maxEventClients: 100,
  requestsPerSecond: 200,
  defaultPageSize: 50,
  maxPageSize: 500,
});
