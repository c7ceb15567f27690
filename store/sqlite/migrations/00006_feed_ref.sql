-- +goose Up
-- A feed entry of an event that references its interaction
-- (user_input_required, events.ref) references it too: data is '' then, and
-- the feed reads the interaction's request (the question is not copied into
-- the owner's feed).
ALTER TABLE feed ADD COLUMN ref TEXT;

-- +goose Down
ALTER TABLE feed DROP COLUMN ref;
