-- 004: a stored score changes with time alone: when the newest signal of an `ok` component passes the freshness
-- window (72 h by default) the component becomes `stale` (× m_stale), with no new signal to trigger a rescoring.
-- `stale_at` is when the subject's next such change is due (null: none); the indexer puts the subjects past it back in
-- a batch to rescore (markStale), so a served score is the one `hcs25 scores` would compute at that time.
ALTER TABLE subject_scores ADD COLUMN stale_at timestamptz;
CREATE INDEX subject_scores_stale_at ON subject_scores (stale_at) WHERE stale_at IS NOT NULL;
-- Scores stored before this migration have no stale_at yet: each is rescored once, which sets it. The batch starts
-- after the topic's cursor, so the scores stay answered as fresh meanwhile (no signal is missing from them).
INSERT INTO dirty_batches (tid, after_seq, subjects)
  SELECT s.tid, t.last_sequence, array_agg(s.subject ORDER BY s.subject)
  FROM subject_scores s JOIN topics t USING (tid) GROUP BY s.tid, t.last_sequence;
