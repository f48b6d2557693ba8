-- The evidence of a question (crates/core/src/evidence.rs; README "Evidence of a question"): the
-- last lines of the agent's screen when it asked, bounded (at most 4096
-- bytes) and redacted before it is stored, written in the ask's own
-- transaction; deleted with its message. The same columns as PostgreSQL's
-- 0042.
CREATE TABLE ask_evidence (
    message_id  TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    screen      TEXT NOT NULL CHECK (length(CAST(screen AS BLOB)) <= 4096),
    created_at  INTEGER NOT NULL
);
