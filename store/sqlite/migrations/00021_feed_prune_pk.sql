-- +goose Up
-- Retention prunes the feed owner by owner on its primary key (an owner's
-- entries are numbered in the order they are committed, so its old ones
-- come first), and an entry fanned out or never an outbox row touches no
-- index: every feed entry written once fanned out no longer writes this
-- index.
DROP INDEX IF EXISTS feed_prune;

-- +goose Down
CREATE INDEX feed_prune ON feed (created_at) WHERE fanned = 1;
