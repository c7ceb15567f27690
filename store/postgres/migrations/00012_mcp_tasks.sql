-- +goose Up
-- The tasks luban's MCP server hands to hosts that speak MCP Tasks
-- (store.MCPTask, docs/design.md §11): a durable handle on one host
-- question, bound to the principal that created it. Its status is read
-- from the interaction; cancelled_at is set (once) when the host cancels.
CREATE TABLE mcp_tasks (
    id            TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    request_id    TEXT NOT NULL,
    protocol      TEXT NOT NULL,
    ttl_ms        BIGINT NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    cancelled_at  TIMESTAMPTZ
);
-- tasks/list: one owner's tasks, newest first.
CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, created_at DESC, id DESC);
CREATE INDEX mcp_tasks_session ON mcp_tasks (session_id);

-- +goose Down
DROP TABLE mcp_tasks;
