-- Leasing ahead (issue 13 point 10): the outbox sender may lease a few due
-- rows before a CLI slot is free. A leased row that was never started (the
-- sender stopped, or its spawn journal shows no start after a crash) is
-- released: back to the state it was claimed from, its attempt not counted.
-- The claim records that state here; NULL on rows claimed before this
-- migration (released as PENDING when never attempted, else FAILED).
ALTER TABLE harness_outbound ADD COLUMN claimed_from TEXT
    CHECK (claimed_from IS NULL OR claimed_from IN ('PENDING', 'FAILED'));
