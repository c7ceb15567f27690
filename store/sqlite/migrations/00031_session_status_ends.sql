-- +goose Up
-- A session's row, and so its place in the listing's index
-- (sessions_owner_updated, on updated_at), changes when a run starts (the
-- trigger runs_one_active) or ends, no longer at its pause and resume:
-- each of those rewrote the row and moved the index entry, a page of each
-- in all four of a cycle's commits. While a run is open the session's
-- status is read through it (a waiting run: waiting_input; see
-- sessionStatus in store/sqlite/queries.go), and updated_at is the time
-- the session's last run started or ended (docs/design.md §33). A resume
-- still sets the status running when something else (an elicitation's
-- wait, SessionSetStatus) left another there, without moving updated_at;
-- a run's end sets the status and updated_at and frees the session as
-- before. No row changes.
DROP TRIGGER runs_session_status;

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

-- +goose Down
-- The pause sets the session waiting_input and the resume running again,
-- with updated_at; the status stored while the run waited (running, as
-- its start set it) is what the read showed: waiting_input.
UPDATE sessions SET status = 'waiting_input'
    WHERE active_run IS NOT NULL AND (SELECT r.status FROM runs r WHERE r.id = sessions.active_run) = 2;
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
