-- An ask may carry the caller's idempotency key (issue 12.9): a client that
-- retries after a lost response gets the same question back instead of a
-- second one. Unique per task; NULL for asks without a key.
ALTER TABLE harness_messages ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX harness_messages_idempotency
    ON harness_messages(task_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
