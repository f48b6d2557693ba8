-- A node's name (the same column as PostgreSQL's 0035): what the UI and the
-- CLI show instead of its id. `harness serve --node-name` / HARNESS_NODE_NAME,
-- default the machine's hostname; written by every heartbeat, so a restart
-- with another name renames the node. NULL for a node that has not
-- heart-beat since this migration (shown by its id).
ALTER TABLE harness_nodes ADD COLUMN name TEXT;
