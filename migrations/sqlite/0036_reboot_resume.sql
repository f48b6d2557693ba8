-- After a reboot, interrupted unattended executions are resumed once
-- (`crates/core/src/reboot.rs`; the same columns as PostgreSQL's 0036).
-- `reboot_state`: NULL (never owed a decision), PENDING (interrupted at a
-- start of its node: the decision is owed), CLAIMED (decided by the boot in
-- `reboot_owner`, `<node>:<boot>`; a resume may be under way), DONE (reported).
-- The claim is a conditional update PENDING → CLAIMED: one boot of one node
-- wins, and a claimed execution is never resumed again automatically.
-- `reboot_note`: why it was not resumed, or how its resume went.
ALTER TABLE executions ADD COLUMN reboot_state TEXT
    CHECK (reboot_state IS NULL OR reboot_state IN ('PENDING', 'CLAIMED', 'DONE'));
ALTER TABLE executions ADD COLUMN reboot_owner TEXT;
ALTER TABLE executions ADD COLUMN reboot_note TEXT;
CREATE INDEX executions_reboot ON executions(reboot_state)
    WHERE reboot_state IN ('PENDING', 'CLAIMED');
