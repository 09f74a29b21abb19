-- hcs25 serve: one schema for both engines (PGlite and PostgreSQL). Applied in order by src/serve/store/migrate.ts;
-- never edit an applied migration, add the next number.

-- One row per indexed topic; its cursor moves only inside the transaction that stores the batch it ends.
CREATE TABLE topics (
  tid serial PRIMARY KEY,
  topic text NOT NULL UNIQUE,
  last_sequence bigint NOT NULL DEFAULT 0,
  last_consensus text,
  last_consensus_at timestamptz,
  signals bigint NOT NULL DEFAULT 0,
  source text,
  behind bigint,
  note text,
  updated_at timestamptz
);

-- Counted things per topic: record kinds, rejection reasons, unknown kinds (category, name) → n.
CREATE TABLE topic_counts (
  tid int NOT NULL REFERENCES topics(tid),
  category text NOT NULL,
  name text NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (tid, category, name)
);

-- Signals as read (v1, v2, packed): `message` keeps the published JSON as read (subject and run are in it).
-- `dedupe` is md5(payer, run, signal id, subject) as a uuid (16 bytes): the first one wins, across restarts.
-- `sh` and `rh` are 32-bit hashes of the subject and run (src/serve/store/sql.ts `hash32`): 4-byte index keys instead
-- of ~140-character UAIDs, rechecked against the message. The cursor guard and the dedupe key make a primary key
-- unnecessary.
CREATE TABLE signals (
  tid int NOT NULL,
  seq bigint NOT NULL,
  idx int NOT NULL,
  sh int NOT NULL,
  rh int NOT NULL,
  consensus text NOT NULL,
  payer text NOT NULL,
  dedupe uuid NOT NULL,
  message json NOT NULL
);
CREATE UNIQUE INDEX signals_dedupe ON signals (tid, dedupe);
CREATE INDEX signals_subject ON signals (sh, tid, seq, idx);
CREATE INDEX signals_run ON signals (tid, rh, seq, idx);

-- Score and reveal records.
CREATE TABLE records (
  tid int NOT NULL,
  seq bigint NOT NULL,
  idx int NOT NULL,
  consensus text NOT NULL,
  payer text NOT NULL,
  kind text NOT NULL,
  v int NOT NULL,
  validated boolean NOT NULL,
  run text,
  message json NOT NULL,
  PRIMARY KEY (tid, seq, idx)
);
CREATE INDEX records_run ON records (tid, run, seq) WHERE kind = 'reveal';

-- Subjects whose signals changed since their score was computed: recomputed in bounded batches. `mark` is the cursor
-- of the batch that touched it last, so a rescore that raced a newer batch leaves the subject dirty.
CREATE TABLE dirty_subjects (
  tid int NOT NULL,
  subject text NOT NULL,
  mark bigint NOT NULL,
  PRIMARY KEY (tid, subject)
);

-- Current score per (topic, subject), written by the rescoring: one subject of `hcs25 scores --json` and the columns the list ranks and filters by.
CREATE TABLE subject_scores (
  tid int NOT NULL,
  subject text NOT NULL,
  total double precision,
  confidence double precision,
  protocol text,
  registry text,
  signals bigint,
  last_at timestamptz,
  -- Payers of the subject's signals: the publisher filter.
  publishers text[],
  score json,
  PRIMARY KEY (tid, subject)
);
CREATE INDEX subject_scores_rank ON subject_scores (total DESC, subject, tid) WHERE total IS NOT NULL;
CREATE INDEX subject_scores_topic_rank ON subject_scores (tid, total DESC, subject) WHERE total IS NOT NULL;
CREATE INDEX subject_scores_protocol_rank ON subject_scores (protocol, total DESC, subject, tid) WHERE total IS NOT NULL;

-- Runs seen per topic, with the stored verification (the verify library), recomputed when marked dirty.
CREATE TABLE runs (
  tid int NOT NULL,
  run text NOT NULL,
  signals bigint NOT NULL DEFAULT 0,
  first_at timestamptz,
  last_at timestamptz,
  revealed boolean NOT NULL DEFAULT false,
  verify_dirty boolean NOT NULL DEFAULT true,
  verification json,
  verified_at timestamptz,
  PRIMARY KEY (tid, run)
);

-- The change counter: ETags, SSE, and other instances polling for news.
CREATE TABLE serve_meta (
  key text PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO serve_meta (key, value) VALUES ('revision', 0);
CREATE INDEX subject_scores_subject ON subject_scores (subject, tid);
