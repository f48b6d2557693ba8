-- The parent inbox and the gateway continuation claims on the owed-work
-- engine, and the Workbench start throttle made durable
-- (docs/ARCHITECTURE.md "Owed work: one engine").
--
-- 1. Workbench events carry the engine's lease and due columns: the claim,
--    release and recovery statements are the engine's generic ones
--    (crates/store/src/shared/work.rs). A PENDING event is due at once.
ALTER TABLE workbench_events RENAME COLUMN claim_owner TO lease_owner;
ALTER TABLE workbench_events ADD COLUMN next_attempt_at BIGINT;
UPDATE workbench_events SET next_attempt_at = updated_at WHERE state = 'PENDING';

-- 2. A continue_bound_task claim is a lease held by the request that made
--    it: its holder (<node>:<boot>) and end, judged by the engine's lease
--    rules instead of the stored result's age. A claim in flight now keeps
--    the 60 s it had.
ALTER TABLE gateway_inbound ADD COLUMN lease_owner TEXT;
ALTER TABLE gateway_inbound ADD COLUMN lease_expires_at BIGINT;
UPDATE gateway_inbound SET lease_expires_at = updated_at + 60000
    WHERE state = 'PROCESSING' AND session_id IS NULL;
CREATE INDEX gateway_inbound_leases ON gateway_inbound(lease_expires_at)
    WHERE lease_expires_at IS NOT NULL;

-- 3. The Workbench start throttle: one start of a Workbench per window,
--    whichever node tries, across restarts (crates/core/src/inbox_ready.rs).
CREATE TABLE workbench_starts (
    task_id          TEXT PRIMARY KEY NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    lease_owner      TEXT NOT NULL,
    tried_at         BIGINT NOT NULL,
    lease_expires_at BIGINT NOT NULL
);
