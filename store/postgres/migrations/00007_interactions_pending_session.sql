-- +goose Up
-- A session's pending questions, indexed by session: the pending question of
-- a session is one probe, and the pending inbox of an owner goes from the
-- owner's sessions (sessions_owner_updated) to their pending questions, so
-- its cost does not grow with other owners' paused runs. Only pending rows
-- are in it; it replaces interactions_session (every interaction ever
-- asked): a session's interactions in order are read by another index that
-- starts with session_id (interactions_resolved) and sorted, a session's
-- worth of rows.
CREATE INDEX interactions_session_pending ON interactions (session_id, created_at) WHERE status = 'pending';
DROP INDEX interactions_session;

-- +goose Down
CREATE INDEX interactions_session ON interactions (session_id, created_at);
DROP INDEX interactions_session_pending;
