/**
 * `GET /v1/subjects/{subject}/history`: the subject's availability and latency over the last 24 h, 7 d and 30 d, and
 * one window's series for a chart (score/history.ts says how they are counted). The answer moves with the clock as
 * well as with the data, so its ETag names the body, not the store revision.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { entityIdSchema } from '../core/id-schemas.js';
import { HISTORY_WINDOWS } from '../score/history.js';
import { ApiError, followedTopic, query, subjectParam, type ParamRoute } from './route-kit.js';

const HISTORY_QUERY = z.strictObject({
  topic: entityIdSchema.optional(),
  window: z.enum(HISTORY_WINDOWS).default('7d'),
});

export const HISTORY_ROUTES: readonly ParamRoute[] = [
  {
    pattern: /^\/v1\/subjects\/([^/]+)\/history$/,
    cache: 'content',
    async handler(ctx, url, raw) {
      const subject = subjectParam(raw);
      const q = query(url, HISTORY_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const history = await ctx.store.subjectHistory(subject, {
        topic,
        window: q.window,
        now: ctx.now?.() ?? new Date(),
      });
      if (!history) throw new ApiError(404, 'SUBJECT_NOT_FOUND', `no signals about this subject on topic ${topic}`);
      const body = Buffer.from(`${JSON.stringify(history)}\n`);
      return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    },
  },
];
