-- Timed automatic actions on unattended agents (`crates/core/src/agent_actions/`;
-- the same table as SQLite's 0038): type "continue" at a usage limit's
-- reset or after an error loop, restart a crashed agent with its session,
-- type a nudge, answer a CLI's own dialog. Work on the engine (kind
-- AgentActions): PENDING (due at next_attempt_at) → RUNNING (claimed: it may
-- be under way) → DONE; FAILED (due again after a backoff); GAVE_UP (no
-- longer applies, or the attempt cap); UNVERIFIED (found RUNNING after its
-- lease lapsed: never done twice); CANCELLED (a person acted first, or a
-- newer state of the agent replaced it).
-- `dedup_key`: one action per execution and state episode.
-- `node_id`: only this node may do it (a key pressed in its terminal); NULL: any node.
CREATE TABLE agent_actions (
    id                    TEXT PRIMARY KEY NOT NULL,
    task_id               TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    execution_id          TEXT NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    node_id               TEXT,
    action                TEXT NOT NULL
                          CHECK (action IN ('continue', 'resume', 'restart', 'nudge', 'answer_dialog')),
    reason                TEXT NOT NULL
                          CHECK (reason IN ('usage_limit', 'usage_limit_self_wait', 'api_errors',
                                            'crash', 'stalled', 'dialog')),
    text                  TEXT,
    due_at                BIGINT NOT NULL,
    dedup_key             TEXT NOT NULL UNIQUE,
    state                 TEXT NOT NULL
                          CHECK (state IN ('PENDING', 'RUNNING', 'DONE', 'FAILED', 'GAVE_UP',
                                           'UNVERIFIED', 'CANCELLED')),
    attempts              BIGINT NOT NULL DEFAULT 0,
    next_attempt_at       BIGINT,
    lease_owner           TEXT,
    lease_expires_at      BIGINT,
    last_error            TEXT,
    result                TEXT,
    delivery_id           TEXT,
    started_execution_id  TEXT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    done_at               BIGINT
);
CREATE INDEX agent_actions_due ON agent_actions(next_attempt_at)
    WHERE state IN ('PENDING', 'FAILED');
CREATE INDEX agent_actions_running ON agent_actions(lease_expires_at) WHERE state = 'RUNNING';
CREATE INDEX agent_actions_execution ON agent_actions(execution_id, reason);
CREATE INDEX agent_actions_task ON agent_actions(task_id, created_at DESC, id DESC);
