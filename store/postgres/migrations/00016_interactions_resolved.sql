-- +goose Up
-- interactions_resolved (session_id, resolved_at) was written twice by
-- every question (its insert and its resolution) and read by nothing that
-- another index starting with session_id (interactions_tool_call) does not
-- serve as well: a session's interactions are a session's worth of rows,
-- sorted (the last resolved, the list), and the inbox's resolved list
-- sorts the interactions of an owner's sessions across sessions.
DROP INDEX interactions_resolved;

-- +goose Down
CREATE INDEX interactions_resolved ON interactions (session_id, resolved_at);
