-- 007: evidence strength (src/score/evidence.ts, docs/serve.md "Evidence strength"). Among equal totals the subject
-- list ranks more eval observations first, so a score that rests on few observations, or on availability alone,
-- comes after a well-evidenced one; `basis` and `low_evidence` are the list's evidence filters.
ALTER TABLE subject_scores ADD COLUMN eval_observations int NOT NULL DEFAULT 0;
ALTER TABLE subject_scores ADD COLUMN basis text;
ALTER TABLE subject_scores ADD COLUMN low_evidence boolean;
-- The ranking indexes follow the new order (total DESC, eval_observations DESC, subject, tid).
DROP INDEX IF EXISTS subject_scores_rank;
DROP INDEX IF EXISTS subject_scores_topic_rank;
DROP INDEX IF EXISTS subject_scores_protocol_rank;
CREATE INDEX subject_scores_evidence_rank ON subject_scores (total DESC, eval_observations DESC, subject, tid)
  WHERE total IS NOT NULL;
CREATE INDEX subject_scores_topic_evidence_rank ON subject_scores (tid, total DESC, eval_observations DESC, subject)
  WHERE total IS NOT NULL;
CREATE INDEX subject_scores_protocol_evidence_rank
  ON subject_scores (protocol, total DESC, eval_observations DESC, subject, tid) WHERE total IS NOT NULL;
-- Scores stored before this migration have neither the columns nor `evidenceStrength` in their JSON: each is rescored
-- once. The batch starts after the topic's cursor, so the scores stay answered as fresh meanwhile.
INSERT INTO dirty_batches (tid, after_seq, subjects)
  SELECT s.tid, t.last_sequence, array_agg(s.subject ORDER BY s.subject)
  FROM subject_scores s JOIN topics t USING (tid) GROUP BY s.tid, t.last_sequence;
