-- +goose Up
-- Three b-trees that every cycle wrote and almost nothing read:
--
-- - messages' UNIQUE id (messages_id_key): nothing finds a message by its
--   id but an event's reference, which EventList reads within the event's
--   session (messages_session). Ids stay unique as agent.NewID makes them
--   (16 random bytes), as on SQLite (its migration 00026).
-- - feed_session: read only by a session delete, which now reads the feed
--   whole (as on SQLite, its migration 00018).
-- - the trace's primary key on id beside trace_session (session_id, id):
--   the trace is read and deleted by session only, so the primary key is
--   (session_id, id) and trace_session goes.
ALTER TABLE messages DROP CONSTRAINT messages_id_key;
DROP INDEX feed_session;
ALTER TABLE trace DROP CONSTRAINT trace_pkey;
ALTER TABLE trace ADD CONSTRAINT trace_pkey PRIMARY KEY (session_id, id);
DROP INDEX trace_session;

-- +goose Down
CREATE INDEX trace_session ON trace (session_id, id);
ALTER TABLE trace DROP CONSTRAINT trace_pkey;
ALTER TABLE trace ADD CONSTRAINT trace_pkey PRIMARY KEY (id);
CREATE INDEX feed_session ON feed (session_id);
ALTER TABLE messages ADD CONSTRAINT messages_id_key UNIQUE (id);
