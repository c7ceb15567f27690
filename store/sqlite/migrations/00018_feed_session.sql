-- +goose Up
-- The feed's index by session was read only when a session is deleted
-- (SessionDelete removes its feed entries), and written by every commit
-- that appends a feed entry: a session delete now reads the feed whole, in
-- one statement (DELETE ... RETURNING), and a cycle writes one b-tree
-- fewer three times.
DROP INDEX feed_session;

-- +goose Down
CREATE INDEX feed_session ON feed (sk);
