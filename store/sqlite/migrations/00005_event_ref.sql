-- +goose Up
-- An event whose data is an interaction's stored request byte for byte
-- (user_input_required) keeps a reference to the interaction instead of a
-- copy; data is '' then, and EventList reads the request (the question is
-- stored once, not twice).
ALTER TABLE events ADD COLUMN ref TEXT;

-- +goose Down
ALTER TABLE events DROP COLUMN ref;
