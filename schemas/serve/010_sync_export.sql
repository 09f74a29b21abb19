-- 010: sync and export (docs/serve.md "Sync and export").
-- When each subject's score was last written by the rescoring (the `now` it was computed for, the score's
-- trustScoreUpdatedAt): `updated_since=<time>` starts at the first subject rescored at or after that time, then pages
-- in change order (tid, rev, subject), the order a sync token continues in.
ALTER TABLE subject_scores ADD COLUMN updated_at timestamptz;
UPDATE subject_scores SET updated_at = (score ->> 'trustScoreUpdatedAt')::timestamptz WHERE score IS NOT NULL;
CREATE INDEX subject_scores_sync ON subject_scores (tid, rev, subject) WHERE score IS NOT NULL;
CREATE INDEX subject_scores_updated_at ON subject_scores (tid, updated_at) WHERE score IS NOT NULL;
-- A topic's signals in consensus order, for the export of a time window. Mirror timestamps are `seconds.nanos` with
-- ten-digit seconds (2001 to 2286) and nine-digit nanos, so the text in byte order ("C") is time order.
CREATE INDEX signals_time ON signals (tid, (consensus COLLATE "C"), idx);
