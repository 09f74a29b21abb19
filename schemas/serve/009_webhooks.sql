-- 009: webhooks (alerts). Hooks are registered through the admin API; the instance holding the indexer lock compares
-- each rescored subject with the state it saw last (hook_subject_state), queues a delivery per hook the change
-- concerns, and delivers it with retries; every attempt is logged. All of it lives here, so restarts and a lock
-- handover to another instance neither lose nor repeat an alert.

-- A registered hook. `secret` signs the deliveries (HMAC-SHA256); it has to be stored as is to sign with it.
CREATE TABLE hooks (
  id text PRIMARY KEY,
  -- Registration order (the list's order and page key).
  n serial NOT NULL UNIQUE,
  url text NOT NULL,
  secret text NOT NULL,
  -- 'score-crossed' and/or 'availability-changed'.
  events text[] NOT NULL,
  -- Score thresholds (0-100) for 'score-crossed', ascending; null without it.
  thresholds double precision[],
  -- Only these subjects (null: every subject).
  subjects text[],
  -- Only this topic (null: every followed topic).
  topic text,
  created_at timestamptz NOT NULL
);

-- One alert for one hook: its body is fixed when queued (every attempt sends the same bytes), `state` is pending until
-- a 2xx answer (delivered) or the last attempt (failed); `next_at` is when a pending one is due.
CREATE TABLE hook_deliveries (
  n bigserial PRIMARY KEY,
  id text NOT NULL UNIQUE,
  hook text NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
  event text NOT NULL,
  topic text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  state text NOT NULL,
  attempts int NOT NULL DEFAULT 0,
  next_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX hook_deliveries_due ON hook_deliveries (next_at) WHERE state = 'pending';
CREATE INDEX hook_deliveries_hook ON hook_deliveries (hook, n);

-- The delivery log: one row per attempt (an HTTP status, or the error when there was none).
CREATE TABLE hook_attempts (
  n bigserial PRIMARY KEY,
  delivery bigint NOT NULL REFERENCES hook_deliveries(n) ON DELETE CASCADE,
  hook text NOT NULL,
  attempt int NOT NULL,
  at timestamptz NOT NULL,
  status int,
  error text,
  ok boolean NOT NULL
);
CREATE INDEX hook_attempts_hook ON hook_attempts (hook, n);
CREATE INDEX hook_attempts_delivery ON hook_attempts (delivery);

-- What the alerting saw of each subject last: its total and whether its latest probe was reachable (null: no probe
-- seen yet). Scores as of this migration are taken as seen, so their first change afterwards is compared with them.
CREATE TABLE hook_subject_state (
  tid int NOT NULL,
  subject text NOT NULL,
  total double precision,
  reachable boolean,
  PRIMARY KEY (tid, subject)
);
INSERT INTO hook_subject_state (tid, subject, total)
  SELECT tid, subject, total FROM subject_scores WHERE total IS NOT NULL;

-- The store revision up to which rescored subjects were compared (subject_scores.rev, migration 003).
INSERT INTO serve_meta (key, value) SELECT 'hooks_revision', value FROM serve_meta WHERE key = 'revision';
