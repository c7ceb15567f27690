-- +goose Up
-- The same tables, columns and indexes as store/sqlite/migrations/00001_init.sql
-- (the partial unique indexes carry the run's invariants); timestamps are
-- timestamptz (optional times are NULL); JSON is TEXT, kept byte for byte as
-- in SQLite (jsonb would reorder keys and refuse \u0000).
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'idle',
    last_seq    BIGINT NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
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
    lease_until     TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL
);
-- One active run per session (docs/design.md §4), enforced by the database.
CREATE UNIQUE INDEX runs_one_active ON runs (session_id) WHERE status IN ('running', 'waiting_input');
CREATE INDEX runs_recoverable ON runs (lease_until) WHERE status = 'running';

CREATE TABLE messages (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    is_error      BOOLEAN NOT NULL DEFAULT FALSE,
    metadata      TEXT,
    parent_id     TEXT NOT NULL DEFAULT '',
    call_index    INTEGER NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL
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
    created_at    TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL,
    resolved_at   TIMESTAMPTZ
);
-- One interaction per tool call.
CREATE UNIQUE INDEX interactions_tool_call ON interactions (session_id, tool_call_id);
CREATE INDEX interactions_pending ON interactions (expires_at) WHERE status = 'pending';
CREATE INDEX interactions_session ON interactions (session_id, created_at);

CREATE TABLE events (
    session_id  TEXT NOT NULL,
    seq         BIGINT NOT NULL,
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE TABLE audit (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id    TEXT NOT NULL,
    request_id    TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    run_id        TEXT NOT NULL DEFAULT '',
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    summary       TEXT,
    at            TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_session ON audit (session_id, id);

CREATE TABLE trace (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          TIMESTAMPTZ NOT NULL
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
