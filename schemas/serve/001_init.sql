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

-- Signals as read (v1, v2, packed): (topic, sequence, index) names one. `dedupe` is md5(payer, run, signal id,
-- subject) as a uuid (16 bytes): the first one wins, across restarts. `message` keeps the published JSON as read.
CREATE TABLE signals (
  tid int NOT NULL,
  seq bigint NOT NULL,
  idx int NOT NULL,
  consensus text NOT NULL,
  payer text NOT NULL,
  subject text NOT NULL,
  run text NOT NULL,
  dedupe uuid NOT NULL,
  message json NOT NULL,
  PRIMARY KEY (tid, seq, idx)
);
CREATE UNIQUE INDEX signals_dedupe ON signals (tid, dedupe);
CREATE INDEX signals_subject ON signals (subject, tid, seq, idx);
CREATE INDEX signals_run ON signals (tid, run, seq, idx);

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

-- Current score per (topic, subject). `dirty` rows are recomputed in bounded batches; `gen` counts the batches that
-- touched the subject, so a rescore that raced a new batch leaves the row dirty.
CREATE TABLE subject_scores (
  tid int NOT NULL,
  subject text NOT NULL,
  dirty boolean NOT NULL DEFAULT true,
  gen bigint NOT NULL DEFAULT 1,
  total double precision,
  confidence double precision,
  protocol text,
  registry text,
  signals bigint,
  last_at timestamptz,
  score json,
  PRIMARY KEY (tid, subject)
);
CREATE INDEX subject_scores_dirty ON subject_scores (tid, subject) WHERE dirty;
CREATE INDEX subject_scores_rank ON subject_scores (total DESC, subject, tid) WHERE total IS NOT NULL;
CREATE INDEX subject_scores_topic_rank ON subject_scores (tid, total DESC, subject) WHERE total IS NOT NULL;
CREATE INDEX subject_scores_protocol_rank ON subject_scores (protocol, total DESC, subject, tid) WHERE total IS NOT NULL;

-- Which publishers (payers) signed signals about a subject: the publisher filter.
CREATE TABLE subject_publishers (
  tid int NOT NULL,
  subject text NOT NULL,
  payer text NOT NULL,
  PRIMARY KEY (tid, subject, payer)
);
CREATE INDEX subject_publishers_payer ON subject_publishers (payer, tid, subject);

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
