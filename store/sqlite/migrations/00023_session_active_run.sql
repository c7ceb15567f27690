-- +goose Up
-- A session's active run is named in the session's row (active_run), not
-- by an index on runs: the row is written anyway by the commits that start
-- and end a run (its status and updated_at, the trigger
-- runs_session_status), while the unique index runs_one_active was a
-- b-tree more that both commits rewrote. One active run per session
-- (docs/design.md §4) is the trigger runs_one_active: a run inserted open
-- into a session that has one fails as the index failed ("UNIQUE
-- constraint failed"), and one that is not sets active_run; the run's end
-- (open set to NULL with its status) clears it.
ALTER TABLE sessions ADD COLUMN active_run BLOB;
UPDATE sessions SET active_run = (SELECT r.id FROM runs r WHERE r.session_id = sessions.id AND r.open = 1)
    WHERE EXISTS (SELECT 1 FROM runs r WHERE r.session_id = sessions.id AND r.open = 1);
DROP INDEX runs_one_active;

-- +goose StatementBegin
CREATE TRIGGER runs_one_active BEFORE INSERT ON runs WHEN NEW.open = 1
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: runs.session_id')
        WHERE (SELECT active_run FROM sessions WHERE id = NEW.session_id) IS NOT NULL;
    UPDATE sessions SET active_run = NEW.id WHERE id = NEW.session_id;
END;
-- +goose StatementEnd

DROP TRIGGER runs_session_status;

-- +goose StatementBegin
CREATE TRIGGER runs_session_status AFTER UPDATE OF status ON runs WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE sessions SET updated_at = NEW.updated_at, status = CASE NEW.status WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input'
        WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' ELSE NEW.status END,
        active_run = CASE WHEN NEW.open IS NULL AND active_run = NEW.id THEN NULL ELSE active_run END
        WHERE id = NEW.session_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER runs_session_status;

-- +goose StatementBegin
CREATE TRIGGER runs_session_status AFTER UPDATE OF status ON runs WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE sessions SET updated_at = NEW.updated_at, status = CASE NEW.status WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input'
        WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' ELSE NEW.status END
        WHERE id = NEW.session_id;
END;
-- +goose StatementEnd

DROP TRIGGER runs_one_active;
CREATE UNIQUE INDEX runs_one_active ON runs (session_id) WHERE open = 1;
ALTER TABLE sessions DROP COLUMN active_run;
