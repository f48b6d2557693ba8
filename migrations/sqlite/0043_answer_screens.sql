-- The receipt of a question (crates/core/src/receipt.rs; README "Evidence of a question"): the
-- agent's screen a few seconds after the answer was typed into its
-- terminal, bounded (at most 4096 bytes) and redacted before it is stored
-- like the ask's own screen (0042); one per answered ask, written once
-- (the first capture wins); deleted with its message. The same columns as
-- PostgreSQL's 0043.
CREATE TABLE answer_screens (
    message_id   TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    delivery_id  TEXT NOT NULL,
    screen       TEXT NOT NULL CHECK (length(CAST(screen AS BLOB)) <= 4096),
    captured_at  INTEGER NOT NULL
);
