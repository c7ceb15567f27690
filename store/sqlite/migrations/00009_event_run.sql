-- +goose Up
-- An event keeps the run its payload names (session, user_input_required,
-- done, error: runId) in a column beside data, so that a reader filters a
-- session's log by run without decoding every event (store.Event.RunID).
-- Events written before this migration get it from their payload, or, for
-- a request stored by reference (data is ''), from its interaction.
ALTER TABLE events ADD COLUMN run_id TEXT;
UPDATE events SET run_id = (SELECT i.run_id FROM interactions i WHERE i.id = events.ref)
    WHERE name = 'user_input_required' AND data = '' AND ref IS NOT NULL;
UPDATE events SET run_id = json_extract(data, '$.runId')
    WHERE run_id IS NULL AND name IN ('session', 'user_input_required', 'done', 'error')
      AND json_valid(data) AND json_type(data, '$.runId') = 'text';

-- +goose Down
ALTER TABLE events DROP COLUMN run_id;
