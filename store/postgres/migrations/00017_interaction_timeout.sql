-- +goose Up
-- An interaction's timeout (its deadline of seq 0, due at its expiry) is
-- kept in its row, as on SQLite (its migration 00022): timeout is its data
-- ('' for none; NULL: the row holds no timeout, its timeout is a row of
-- interaction_deadlines), timeout_fired is NULL until it fired or the
-- interaction was resolved (which closes it). A question's insert no
-- longer writes a row of interaction_deadlines and its three index
-- entries; the due timeouts are found through interactions_pending. The
-- timeouts of pending interactions move into their rows; those of
-- resolved ones stay where they are (DeadlineList reads both).
ALTER TABLE interactions ADD COLUMN timeout TEXT, ADD COLUMN timeout_fired TIMESTAMPTZ;
UPDATE interactions i SET timeout = COALESCE(d.data, ''), timeout_fired = d.fired_at
    FROM interaction_deadlines d
    WHERE i.status = 'pending' AND d.request_id = i.id AND d.seq = 0 AND d.kind = 'timeout' AND d.due_at = i.expires_at;
DELETE FROM interaction_deadlines d USING interactions i
    WHERE d.request_id = i.id AND d.seq = 0 AND i.timeout IS NOT NULL;

-- +goose Down
INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, fired_at, data)
    SELECT id, 0, session_id, 'timeout', expires_at, timeout_fired, NULLIF(timeout, '') FROM interactions WHERE timeout IS NOT NULL;
ALTER TABLE interactions DROP COLUMN timeout_fired, DROP COLUMN timeout;
