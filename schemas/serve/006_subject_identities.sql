-- 006: who each subject is, from the registry entry its signals cite (`sources`: hcs://2/{topic}). Citations are
-- recorded with the batch that stores the signals; the indexer reads each cited registry as it was at the newest
-- citing signal (discoverAgents `until`) and stores the entry it found. A subject is due for resolving while the
-- newest citation is newer than the one its entry was resolved for (resolved_seq): a newer signal, a newer entry.
CREATE TABLE subject_identities (
  tid int NOT NULL,
  subject text NOT NULL,
  -- The registry the newest citing signal names (its topic id), that signal's sequence and consensus time.
  registry text NOT NULL,
  cited_seq bigint NOT NULL,
  cited_at text NOT NULL,
  -- The cited_seq the stored entry was resolved for (null: never resolved).
  resolved_seq bigint,
  -- pending (not resolved yet), resolved, not-listed (the registry does not list it), unavailable (the registry could
  -- not be read; retried).
  status text NOT NULL DEFAULT 'pending',
  note text,
  name text,
  protocol text,
  endpoint text,
  account_id text,
  -- The registry message that listed it: hcs://2/{topic}#{sequence} (the topic it migrated to, if it did).
  entry text,
  entry_seq bigint,
  PRIMARY KEY (tid, subject)
);
CREATE INDEX subject_identities_due ON subject_identities (registry, tid, subject)
  WHERE resolved_seq IS NULL OR resolved_seq < cited_seq;
CREATE INDEX subject_identities_registry ON subject_identities (registry);
