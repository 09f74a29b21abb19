/**
 * Keyset paging of the store's lists: a page is at most `limit` rows, and its `next` cursor is the last row's sort key
 * (opaque to clients: base64url JSON), so a list never uses OFFSET and stays bounded however deep it is read.
 */
import type { z } from 'zod';
import { Hcs25Error } from '../../core/errors.js';

/** Largest page any list returns; a bigger `limit` is clamped to it. */
export const MAX_PAGE = 1000;
export const DEFAULT_PAGE = 100;

export interface PageOptions {
  /** Opaque keyset cursor from a previous page's `next`. */
  cursor?: string;
  /** Page size, 1..MAX_PAGE (default DEFAULT_PAGE). */
  limit?: number;
}

export interface Page<T> {
  items: T[];
  /** Cursor for the next page, or null at the end. */
  next: string | null;
}

export function pageLimit(page: PageOptions): number {
  const limit = page.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1)
    throw new Hcs25Error('USAGE', `limit must be an integer from 1 to ${MAX_PAGE}`);
  return Math.min(limit, MAX_PAGE);
}

export function paged<R, T>(rows: R[], limit: number, map: (row: R) => T, key: (row: R) => unknown[]): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items: items.map(map),
    next: more ? Buffer.from(JSON.stringify(key(items[items.length - 1]!))).toString('base64url') : null,
  };
}

export function decodeCursor<T>(cursor: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (cursor === undefined) return undefined;
  try {
    return schema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Hcs25Error('USAGE', 'the page cursor is not one this list gave out', {
      hint: 'pass the `next` value of the previous page unchanged',
    });
  }
}
