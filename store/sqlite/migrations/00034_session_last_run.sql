-- +goose Up
-- A session's row changes when a run starts, no longer when it ends:
-- sessions.active_run names the session's last run, which is its active
-- run while it is open (runs.open = 1), and once it ended the session's
-- status is read from it (sessionStatus in store/sqlite/queries.go). The
-- run's end wrote the row (status, updated_at, active_run cleared) and
-- moved its entry in sessions_owner_updated: a page of each in a cycle's
-- last commit. updated_at is the time the session's last run started (or
-- its status was set); retention counts from the last run's end through
-- the run's row (docs/design.md §33). A run that ends while it is not the
-- session's last (none is open then; kept for rows of any age) still sets
-- the session's status. No row changes.
DROP TRIGGER runs_one_active;
DROP TRIGGER runs_session_status;

-- +goose StatementBegin
CREATE TRIGGER runs_one_active BEFORE INSERT ON runs WHEN NEW.open = 1
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: runs.session_id')
        WHERE (SELECT r.open FROM runs r WHERE r.id = (SELECT active_run FROM sessions WHERE id = NEW.session_id)) = 1;
    UPDATE sessions SET active_run = NEW.id,
        status = CASE NEW.status WHEN 1 THEN 'running' ELSE status END,
        updated_at = CASE NEW.status WHEN 1 THEN NEW.updated_at ELSE updated_at END
        WHERE id = NEW.session_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER runs_session_status AFTER UPDATE OF status ON runs WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE sessions SET updated_at = NEW.updated_at, status = CASE NEW.status WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input'
        WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' ELSE NEW.status END
        WHERE id = NEW.session_id AND NEW.open IS NULL AND active_run IS NOT NEW.id;
    UPDATE sessions SET status = 'running'
        WHERE id = NEW.session_id AND NEW.open = 1 AND NEW.status = 1 AND status IS NOT 'running';
END;
-- +goose StatementEnd

-- +goose Down
-- The run's end wrote its status, its time and freed the session: the
-- sessions whose last run ended get those in their rows.
UPDATE sessions SET status = COALESCE((SELECT CASE r.status WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired'
        WHEN 6 THEN 'failed' ELSE r.status END FROM runs r WHERE r.id = sessions.active_run), status),
    updated_at = MAX(updated_at, COALESCE((SELECT r.updated_at FROM runs r WHERE r.id = sessions.active_run), updated_at)),
    active_run = NULL
    WHERE active_run IS NOT NULL AND (SELECT r.open FROM runs r WHERE r.id = sessions.active_run) IS NOT 1;
DROP TRIGGER runs_one_active;
DROP TRIGGER runs_session_status;

-- +goose StatementBegin
CREATE TRIGGER runs_one_active BEFORE INSERT ON runs WHEN NEW.open = 1
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: runs.session_id')
        WHERE (SELECT active_run FROM sessions WHERE id = NEW.session_id) IS NOT NULL;
    UPDATE sessions SET active_run = NEW.id,
        status = CASE NEW.status WHEN 1 THEN 'running' ELSE status END,
        updated_at = CASE NEW.status WHEN 1 THEN NEW.updated_at ELSE updated_at END
        WHERE id = NEW.session_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER runs_session_status AFTER UPDATE OF status ON runs WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE sessions SET updated_at = NEW.updated_at, status = CASE NEW.status WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input'
        WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' ELSE NEW.status END,
        active_run = CASE WHEN active_run = NEW.id THEN NULL ELSE active_run END
        WHERE id = NEW.session_id AND NEW.open IS NULL;
    UPDATE sessions SET status = 'running'
        WHERE id = NEW.session_id AND NEW.open = 1 AND NEW.status = 1 AND status IS NOT 'running';
END;
-- +goose StatementEnd
