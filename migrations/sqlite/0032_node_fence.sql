-- A dead node's boot is fenced before a survivor recovers it (issue 30; the
-- same column as PostgreSQL's 0021): `fenced_boot` is the boot whose work the
-- survivors took over. That boot's heartbeat is refused from then on, so a
-- node that only stalled (and never crashed) learns it was declared dead and
-- stops instead of running agents the database says were interrupted.
ALTER TABLE harness_nodes ADD COLUMN fenced_boot TEXT;
