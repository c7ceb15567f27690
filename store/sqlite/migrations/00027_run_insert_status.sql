-- +goose Up
-- A run inserted open sets its session's status to running and updated_at
-- to the run's in the trigger that already names it in the session's row
-- (runs_one_active, migration 00023): the row is written by that UPDATE
-- anyway, so a new run in an existing session needs no statement of its
-- own for the session (RunInsert's contract, store/params.go). A run is
-- inserted open only in status running; the CASE keeps the status of any
-- other.
DROP TRIGGER runs_one_active;

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

-- +goose Down
DROP TRIGGER runs_one_active;

-- +goose StatementBegin
CREATE TRIGGER runs_one_active BEFORE INSERT ON runs WHEN NEW.open = 1
BEGIN
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: runs.session_id')
        WHERE (SELECT active_run FROM sessions WHERE id = NEW.session_id) IS NOT NULL;
    UPDATE sessions SET active_run = NEW.id WHERE id = NEW.session_id;
END;
-- +goose StatementEnd
