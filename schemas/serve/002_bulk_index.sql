-- 002: bulk indexing (signals are written with COPY; see src/serve/store/sql.ts).
-- Subjects to rescore are recorded once per stored batch (its topic, the cursor before it, the distinct subjects of
-- the signals it stored) instead of one upserted row per subject and batch: the per-row upsert cost as much as the
-- signal insert itself. The rescoring takes these rows in id order, a bounded number of subjects per round; a
-- subject's stored score is fresh when no pending row of its topic starts before the subject's newest signal.
CREATE TABLE dirty_batches (
  id bigserial PRIMARY KEY,
  tid int NOT NULL,
  after_seq bigint NOT NULL,
  subjects text[] NOT NULL
);
CREATE INDEX dirty_batches_topic ON dirty_batches (tid, after_seq);
-- Subjects still dirty in a database written by 001: one row per topic, before every signal (after_seq 0).
INSERT INTO dirty_batches (tid, after_seq, subjects)
  SELECT tid, 0, array_agg(subject ORDER BY subject) FROM dirty_subjects GROUP BY tid;
DROP TABLE dirty_subjects;
