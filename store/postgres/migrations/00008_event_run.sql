-- +goose Up
-- An event keeps the run its payload names (session, user_input_required,
-- done, error: runId) in a column beside data, so that a reader filters a
-- session's log by run without decoding every event (store.Event.RunID).
-- Events written before this migration get it from their payload (a
-- pattern, not a cast: a row that is not JSON cannot stop the upgrade), or,
-- for a request stored by reference (data is ''), from its interaction.
ALTER TABLE events ADD COLUMN run_id TEXT;
UPDATE events e SET run_id = i.run_id FROM interactions i
    WHERE i.id = e.ref AND e.name = 'user_input_required' AND e.data = '';
UPDATE events SET run_id = substring(data from '"runId":"([^"\\]*)"')
    WHERE run_id IS NULL AND name IN ('session', 'user_input_required', 'done', 'error');

-- +goose Down
ALTER TABLE events DROP COLUMN run_id;
