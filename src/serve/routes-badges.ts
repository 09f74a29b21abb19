/**
 * Badges: `/v1/subjects/{subject}/badge/{score|availability}.{json|svg}`, Shields' endpoint JSON or a flat SVG
 * (report/badge.ts), built from the score cache's answer: a cached subject's badge costs no query, and a badge with
 * its default label is drawn once for every subject that shows the same value. An unknown subject gets a 200 badge
 * saying `unknown`: a badge is a picture in someone's page (Shields shows an error for anything but a 200 with a
 * message, a browser a broken image).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { BADGE_METRICS, type Badge, type BadgeMetric, badgeFor, badgeSvg, shieldsEndpoint } from '../report/badge.js';
import { PENDING } from './cache.js';
import { entityIdSchema } from '../core/id-schemas.js';
// Functions only: routes.ts imports this module, so nothing of it may be used while the modules load.
import { followedTopic, query, subjectParam, type ParamRoute, type Reply } from './route-kit.js';

/**
 * Five minutes: Shields' own floor for `cacheSeconds`, so both forms refresh alike. Scores move with runs (hours
 * apart), so a badge at most five minutes old says the same, while a much-viewed page costs one request per viewer
 * cache (and per Shields or GitHub proxy) every five minutes.
 */
export const BADGE_MAX_AGE = 300;
const CACHE_CONTROL = `public, max-age=${BADGE_MAX_AGE}`;

const BADGE_QUERY = z.strictObject({
  topic: entityIdSchema.optional(),
  label: z
    .string()
    .min(1)
    .max(40)
    .regex(/^[^\p{Cc}\p{Cf}]+$/u, 'printable text')
    .optional(),
});

type Format = 'json' | 'svg';

interface Rendered {
  body: Buffer;
  etag: string;
}

/** The badge's body and a tag naming it: an unchanged badge keeps its tag when its score's other fields change. */
function render(badge: Badge, format: Format): Rendered {
  const text = format === 'svg' ? badgeSvg(badge) : `${JSON.stringify(shieldsEndpoint(badge, BADGE_MAX_AGE))}\n`;
  const body = Buffer.from(text);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * Default-label badges rendered once and shared by every subject that shows the same value: a badge is its label,
 * message and colour, and a message is a number to one decimal or one of a few words, so the map holds a few thousand
 * badges at most however many subjects there are (docs/performance.md, "Rendered badges shared by value").
 */
const rendered = new Map<string, Rendered>();

function renderDefault(badge: Badge, format: Format): Rendered {
  const key = `${format}\n${badge.label}\n${badge.message}\n${badge.color}`;
  let hit = rendered.get(key);
  if (!hit) {
    hit = render(badge, format);
    rendered.set(key, hit);
  }
  return hit;
}

function badgeRoute(metric: BadgeMetric, format: Format): ParamRoute {
  return {
    pattern: new RegExp(`^/v1/subjects/([^/]+)/badge/${metric}\\.${format}$`),
    cache: 'content',
    async handler(ctx, url, raw): Promise<Reply> {
      const subject = subjectParam(raw);
      const q = query(url, BADGE_QUERY);
      const topic = followedTopic(ctx, q.topic);
      const answer = await ctx.scores.get(topic, subject);
      const badge =
        answer === null || answer === PENDING
          ? badgeFor(metric, answer === null ? 'unknown' : 'pending', q.label)
          : { ...answer.badges[metric], ...(q.label !== undefined && { label: q.label }) };
      // A custom label is the caller's: drawn for this request, not kept.
      const { body, etag } = q.label === undefined ? renderDefault(badge, format) : render(badge, format);
      return format === 'svg'
        ? {
            body,
            etag,
            contentType: 'image/svg+xml; charset=utf-8',
            cacheControl: CACHE_CONTROL,
            // Opened on its own, the picture may not run or fetch anything (it has nothing to run).
            headers: { 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'" },
          }
        : { body, etag, cacheControl: CACHE_CONTROL };
    },
  };
}

export const BADGE_ROUTES: readonly ParamRoute[] = BADGE_METRICS.flatMap((metric) => [
  badgeRoute(metric, 'json'),
  badgeRoute(metric, 'svg'),
]);
