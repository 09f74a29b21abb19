-- 005: the publisher allow-list each topic was indexed under (null: every payer). Signals of other payers are not
-- stored, so a topic indexed under another list is indexed again from its first message (useAllowList): a removed
-- publisher's signals leave the scores, an added one's are read. Topics indexed before this migration take the list
-- of their next indexer as theirs (`publishers_known` false: it was not recorded).
ALTER TABLE topics ADD COLUMN publishers text[];
ALTER TABLE topics ADD COLUMN publishers_known boolean NOT NULL DEFAULT false;
