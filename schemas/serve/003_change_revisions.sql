-- The revision at which each subject's served answer last changed (its score rescored, or newer signals put it in a
-- batch to rescore), so instances that cache answers drop exactly the changed subjects when the revision moves
-- (ScoreCache, changesSince). Rows from before this migration keep 0: a cache starts empty, so they need no revision.
ALTER TABLE subject_scores ADD COLUMN rev bigint NOT NULL DEFAULT 0;
ALTER TABLE dirty_batches ADD COLUMN rev bigint NOT NULL DEFAULT 0;
CREATE INDEX subject_scores_rev ON subject_scores (rev);
CREATE INDEX dirty_batches_rev ON dirty_batches (rev);
