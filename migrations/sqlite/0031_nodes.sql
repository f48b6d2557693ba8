-- Several nodes on one database (issue 30; the same table as PostgreSQL's
-- 0020, where a cluster runs: on SQLite one node writes its own row).
--
-- harness_nodes: one row per node (its id from `<data-dir>/node-id`), written
-- by its heartbeat worker. Times are the DATABASE's clock (ms since the
-- epoch). `boot` is the process's boot id (leases are owned by
-- `<id>:<boot>`); `recovered_boot` the boot whose leftovers a survivor
-- recovered; `draining` 1 while the node takes no new work.
CREATE TABLE harness_nodes (
    id              TEXT PRIMARY KEY NOT NULL,
    boot            TEXT NOT NULL,
    url             TEXT,
    started_at      INTEGER NOT NULL,
    heartbeat_at    INTEGER NOT NULL,
    draining        INTEGER NOT NULL DEFAULT 0 CHECK (draining IN (0, 1)),
    recovered_boot  TEXT
) WITHOUT ROWID;

-- The outbox's "really started" evidence: the attempt whose CLI a sender
-- spawned, committed just before the spawn (see PostgreSQL's 0020).
ALTER TABLE harness_outbound ADD COLUMN started_attempt INTEGER;
