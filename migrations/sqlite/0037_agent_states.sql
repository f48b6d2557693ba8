-- One truthful state per live agent (crates/core/src/agent_state; the same
-- table as PostgreSQL's 0037): the current state of each execution's agent
-- as the watcher last recorded it — written only when it changes. `state`
-- is one of `AgentState::NAMES`; `reason` the state in words; `lines` (a
-- JSON array, at most 8) the screen lines that show it; `since` when the
-- agent entered the state (kept while only a detail changes). The details:
-- `error_kind`, `attempt`/`attempt_of`, `gave_up` (erroring); `reset_text`,
-- `reset_at` (usage-limited); `exit_code` (exited); `signal` (crashed);
-- `silent_secs` (stalled); `dialog_title`, `dialog_options` (a JSON array:
-- waiting on a dialog of the CLI).
CREATE TABLE agent_states (
    execution_id   TEXT PRIMARY KEY NOT NULL REFERENCES executions(id) ON DELETE CASCADE,
    task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    state          TEXT NOT NULL CHECK (state IN ('working', 'waiting_for_person', 'idle',
                       'usage_limited', 'erroring', 'logged_out', 'stalled', 'exited', 'crashed')),
    reason         TEXT NOT NULL,
    lines          TEXT NOT NULL DEFAULT '[]',
    since          INTEGER NOT NULL,
    error_kind     TEXT,
    attempt        INTEGER,
    attempt_of     INTEGER,
    gave_up        INTEGER NOT NULL DEFAULT 0 CHECK (gave_up IN (0, 1)),
    reset_text     TEXT,
    reset_at       INTEGER,
    exit_code      INTEGER,
    signal         INTEGER,
    silent_secs    INTEGER,
    dialog_title   TEXT,
    dialog_options TEXT NOT NULL DEFAULT '[]',
    updated_at     INTEGER NOT NULL
);
CREATE INDEX agent_states_task ON agent_states (task_id);

-- The newest hook event of an execution whose kind of turn changed
-- (`stop` after a turn's events, or the first event of a turn after a
-- `stop`): after a restart the watcher knows an agent idle at its prompt
-- from one at work (`session_start`, `user_prompt_submit`, `pre_tool_use`,
-- `post_tool_use`, `stop`).
ALTER TABLE executions ADD COLUMN last_hook TEXT;
ALTER TABLE executions ADD COLUMN last_hook_at INTEGER;
