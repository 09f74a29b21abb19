-- 011: subjects to rescore, one row each (src/serve/store/rescore.ts), instead of a row per stored batch listing its
-- subjects. Whether a stored score is fresh is then one index lookup; with batch rows it searched the lists of every
-- pending batch, so reading scores back while a backlog waited cost in proportion to the backlog's square. A subject
-- that several batches touch waits once and is rescored once.
-- `after_seq` is the topic's cursor before the earliest batch that brought the subject signals since its score (its
-- score is fresh while its newest signal is not after it); `rev` is the revision that last changed the row (the
-- subject's answer changed: changesSince); `queued` orders the rescoring, first come first served.
CREATE TABLE pending_subjects (
  tid int NOT NULL,
  subject text NOT NULL,
  after_seq bigint NOT NULL,
  rev bigint NOT NULL DEFAULT 0,
  queued bigserial NOT NULL,
  PRIMARY KEY (tid, subject)
);
CREATE INDEX pending_subjects_queued ON pending_subjects (queued);
CREATE INDEX pending_subjects_rev ON pending_subjects (rev);
INSERT INTO pending_subjects (tid, subject, after_seq, rev)
  SELECT tid, subject, min(after_seq), max(rev)
  FROM (SELECT tid, unnest(subjects) AS subject, after_seq, rev, id FROM dirty_batches) d
  GROUP BY tid, subject ORDER BY min(id);
DROP TABLE dirty_batches;
