-- 008: a subject's history (GET /v1/subjects/{subject}/history). Its availability and latency windows read the
-- subject's signals of the last 30 days: this index finds them by consensus second, so the work is the window's
-- signals, not every signal the subject ever had (signals_subject orders them by sequence number only).
CREATE INDEX signals_subject_time ON signals (sh, tid, (split_part(consensus, '.', 1)::bigint));

-- The score over time: one row each time a rescoring changed a subject's total or confidence, at the time it was
-- computed. Rows older than 30 days are pruned when the subject is rescored, except the newest of them (the score in
-- force when a 30-day window starts).
CREATE TABLE score_history (
  tid int NOT NULL,
  subject text NOT NULL,
  at timestamptz NOT NULL,
  total double precision NOT NULL,
  confidence double precision NOT NULL,
  PRIMARY KEY (tid, subject, at)
);
-- Scores stored before this migration start their history now.
INSERT INTO score_history (tid, subject, at, total, confidence)
  SELECT tid, subject, now(), total, confidence FROM subject_scores WHERE total IS NOT NULL AND confidence IS NOT NULL;
