-- Several nodes on one database (issue 30).
--
-- harness_nodes: one row per node (its id from `<data-dir>/node-id`), written
-- by its heartbeat worker. Times are the DATABASE's clock (ms since the
-- epoch), so whether a node is alive never depends on a node's own clock.
-- `boot` is the process's boot id (leases are owned by `<id>:<boot>`);
-- `recovered_boot` the boot whose leftovers a survivor recovered after the
-- node stopped heart-beating; `draining` 1 while the node takes no new work.
CREATE TABLE harness_nodes (
    id              TEXT PRIMARY KEY NOT NULL,
    boot            TEXT NOT NULL,
    url             TEXT,
    started_at      BIGINT NOT NULL,
    heartbeat_at    BIGINT NOT NULL,
    draining        BIGINT NOT NULL DEFAULT 0 CHECK (draining IN (0, 1)),
    recovered_boot  TEXT
);

-- The outbox's "really started" evidence: the attempt whose CLI a sender
-- spawned, committed just before the spawn. A SENDING row whose lease
-- holder died is SENT_UNVERIFIED only when started_attempt = attempts;
-- otherwise the attempt never started and the row is due again.
ALTER TABLE harness_outbound ADD COLUMN started_attempt BIGINT;
