-- A dead node's boot is fenced before a survivor recovers it (issue 30):
-- `fenced_boot` is the boot whose work the survivors took over. That boot's
-- heartbeat is refused from then on (the upsert's WHERE), so a node that
-- only stalled past the dead-after (and never crashed) learns it was
-- declared dead and stops instead of running agents the database says were
-- interrupted. The fence and a heartbeat of the same row serialize on its
-- row lock: whichever commits first decides.
ALTER TABLE harness_nodes ADD COLUMN fenced_boot TEXT;
