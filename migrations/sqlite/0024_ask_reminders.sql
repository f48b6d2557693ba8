-- Reminders of OPEN asks that reached a person's chat (issue 32): one row per
-- reminder sent, (ask, n) unique — the n-th reminder of an ask is written
-- at most once, in the same transaction as its outbound row (the outbox
-- sends it: SENT_UNVERIFIED on a crash mid-send, never resent blindly).
CREATE TABLE ask_reminders (
    message_id   TEXT NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    seq          INTEGER NOT NULL CHECK (seq >= 1),
    outbound_id  TEXT NOT NULL UNIQUE,
    waited_ms    INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (message_id, seq)
);
