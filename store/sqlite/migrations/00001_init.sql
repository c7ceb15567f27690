-- +goose Up
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'idle',
    last_seq    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at DESC);

CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions (id),
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL,
    steps           INTEGER NOT NULL DEFAULT 0,
    invalid_streak  INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
-- One active run per session (docs/design.md §4), enforced by the database.
CREATE UNIQUE INDEX runs_one_active ON runs (session_id) WHERE status IN ('running', 'waiting_input');
CREATE INDEX runs_recoverable ON runs (status, lease_until) WHERE status = 'running';

CREATE TABLE messages (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    is_error      INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT,
    parent_id     TEXT NOT NULL DEFAULT '',
    call_index    INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
CREATE INDEX messages_session ON messages (session_id, seq);
-- Exactly one ToolResult per tool call (docs/design.md §3).
CREATE UNIQUE INDEX messages_one_result ON messages (session_id, tool_call_id) WHERE role = 'tool';

CREATE TABLE interactions (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    tool          TEXT NOT NULL,
    request       TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending',
    answer        TEXT,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    resolved_at   INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX interactions_tool_call ON interactions (session_id, tool_call_id);
CREATE INDEX interactions_pending ON interactions (status, expires_at) WHERE status = 'pending';
CREATE INDEX interactions_session ON interactions (session_id, created_at);

CREATE TABLE events (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE audit (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL,
    request_id    TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    run_id        TEXT NOT NULL DEFAULT '',
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    summary       TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX audit_session ON audit (session_id, id);

CREATE TABLE trace (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX trace_session ON trace (session_id, id);

-- +goose Down
DROP TABLE trace;
DROP TABLE audit;
DROP TABLE events;
DROP TABLE interactions;
DROP TABLE messages;
DROP TABLE runs;
DROP TABLE sessions;
