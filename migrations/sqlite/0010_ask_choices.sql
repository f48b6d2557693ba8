-- Structured questions (issue 16): the options of an ask (Claude Code's
-- AskUserQuestion shape, JSON [{label, description?}]), multiSelect, the
-- default label taken when the deadline passes with the ask still OPEN, the
-- urgency, and who answered when it was not a person. One row per ask that
-- has any of these; a plain ask has none.
CREATE TABLE ask_choices (
    message_id     TEXT PRIMARY KEY NOT NULL REFERENCES harness_messages(id) ON DELETE CASCADE,
    options        TEXT NOT NULL DEFAULT '[]',
    multi_select   INTEGER NOT NULL DEFAULT 0 CHECK (multi_select IN (0, 1)),
    default_label  TEXT,
    deadline_at    INTEGER,          -- ms since the epoch
    urgency        TEXT NOT NULL DEFAULT 'normal' CHECK (urgency IN ('low', 'normal', 'high')),
    answered_by    TEXT CHECK (answered_by IN ('default_after_deadline'))
);
-- The deadline sweep: pending defaults by deadline.
CREATE INDEX ask_choices_due ON ask_choices(deadline_at)
    WHERE default_label IS NOT NULL AND deadline_at IS NOT NULL AND answered_by IS NULL;
