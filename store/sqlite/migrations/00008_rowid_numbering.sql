-- +goose Up
-- messages and trace number their rows with the plain rowid instead of
-- AUTOINCREMENT: every AUTOINCREMENT insert reads and rewrites its table's
-- row in sqlite_sequence, a page more in every commit that adds a message
-- or a trace entry (each of a cycle's four). A new row still gets one past
-- the largest row present, so a session's rows stay in order; a number can
-- come back only after the rows holding the largest numbers were deleted
-- with their session, and nothing refers to a message or a trace entry by
-- its number (events reference messages by id). The audit keeps
-- AUTOINCREMENT: it outlives its sessions and is pruned by age, and its
-- numbers are never given twice.
ALTER TABLE messages RENAME TO messages_old;
CREATE TABLE messages (
    seq           INTEGER PRIMARY KEY,
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
INSERT INTO messages SELECT seq, id, session_id, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at FROM messages_old;
DROP TABLE messages_old;
CREATE INDEX messages_session ON messages (session_id, seq);
CREATE UNIQUE INDEX messages_one_result ON messages (session_id, tool_call_id) WHERE role = 'tool';

ALTER TABLE trace RENAME TO trace_old;
CREATE TABLE trace (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
INSERT INTO trace SELECT id, session_id, run_id, kind, data, at FROM trace_old;
DROP TABLE trace_old;
CREATE INDEX trace_session ON trace (session_id, id);

-- +goose Down
ALTER TABLE messages RENAME TO messages_old;
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
INSERT INTO messages SELECT seq, id, session_id, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at FROM messages_old;
DROP TABLE messages_old;
CREATE INDEX messages_session ON messages (session_id, seq);
CREATE UNIQUE INDEX messages_one_result ON messages (session_id, tool_call_id) WHERE role = 'tool';

ALTER TABLE trace RENAME TO trace_old;
CREATE TABLE trace (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
INSERT INTO trace SELECT id, session_id, run_id, kind, data, at FROM trace_old;
DROP TABLE trace_old;
CREATE INDEX trace_session ON trace (session_id, id);
