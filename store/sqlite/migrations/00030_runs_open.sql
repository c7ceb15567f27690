-- +goose Up
-- Recovery finds a run whose lease expired among the open runs (running
-- or waiting_input: open = 1, set at the run's insert and cleared at its
-- end), not through an index of the running ones: runs_recoverable
-- (lease_until WHERE status = 1) took an entry out and put one back at
-- every pause and resume, so each of a cycle's four commits rewrote a leaf
-- of it. runs_open changes only when a run starts or ends; its key, the
-- run's created_at, never changes, so a new run's entry is appended and an
-- ending run's is removed. RunListRecoverable reads the open runs' rows and
-- keeps the running ones whose lease expired (docs/design.md §33).
DROP INDEX runs_recoverable;
CREATE INDEX runs_open ON runs (created_at) WHERE open = 1;

-- +goose Down
DROP INDEX runs_open;
CREATE INDEX runs_recoverable ON runs (lease_until) WHERE status = 1;
