-- The pending and answered views (and the TTL sweep, the pending count) read
-- only OPEN or ANSWERED asks: two small partial indexes serve them, and an
-- ask no longer moves entries around one big (kind, state, …) index. An ask
-- transaction dirties ~8 pages instead of ~10.
DROP INDEX harness_messages_kind_state_created;
CREATE INDEX harness_messages_open_asks
    ON harness_messages(created_at DESC, id DESC) WHERE kind = 'ask' AND state = 'OPEN';
CREATE INDEX harness_messages_answered_asks
    ON harness_messages(created_at DESC, id DESC) WHERE kind = 'ask' AND state = 'ANSWERED';
