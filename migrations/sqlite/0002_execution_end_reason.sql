-- Why an execution ended: 'exited', 'stopped', 'interrupted' (server restart), 'spawn_failed'.
ALTER TABLE executions ADD COLUMN end_reason TEXT;
