-- The revision at which each subject's served answer last changed (its score rescored, or newer signals marked it
-- dirty), so instances that cache answers drop exactly the changed subjects when the revision moves (ScoreCache).
-- Rows from before this migration keep 0: a cache starts empty, so they need no revision.
ALTER TABLE subject_scores ADD COLUMN rev bigint NOT NULL DEFAULT 0;
ALTER TABLE dirty_subjects ADD COLUMN rev bigint NOT NULL DEFAULT 0;
CREATE INDEX subject_scores_rev ON subject_scores (rev);
CREATE INDEX dirty_subjects_rev ON dirty_subjects (rev);
