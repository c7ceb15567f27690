-- Migration 00016 (sessionKeyMigration runs it): the part above the
-- Down marker goes up, the part below it down; each is one transaction.
-- +goose Up
-- A session gets an integer key, k (its rowid, kept), and the session's
-- rows in messages, events, trace and the feed name it (sk) instead of
-- repeating its 30-character id: new sessions get ever larger keys, so a
-- session's rows sit together at the end of each b-tree, and a commit
-- writes one leaf per table instead of a leaf wherever a random id falls.
-- events are clustered by (sk, seq); messages and trace are found by
-- (sk, seq) and (sk, id). A key may be given again only after the session
-- holding the largest was deleted, with every row that names it. The audit
-- keeps the session's id: it outlives its session.
--
-- sessions is rebuilt under other tables' references (runs, interactions,
-- mcp_tasks name sessions(id), which stays unique, with the same rows):
-- foreign keys are off for the rebuild, which is one transaction of its
-- own. Rows copied; numbers (event, message, trace, feed)
-- kept; the largest event and feed numbers are kept in sessions.last_seq
-- and principals.last_seq first, as Prune does.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
UPDATE sessions SET last_seq = MAX(last_seq, COALESCE((SELECT MAX(e.seq) FROM events e WHERE e.session_id = sessions.id), 0));
INSERT INTO principals (owner, last_seq) SELECT owner, MAX(seq) FROM feed GROUP BY owner
    ON CONFLICT (owner) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq);

CREATE TABLE sessions_new (
    k           INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    owner       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'idle',
    last_seq    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    agent       TEXT NOT NULL DEFAULT ''
);
INSERT INTO sessions_new (k, id, owner, title, status, last_seq, created_at, updated_at, agent)
    SELECT rowid, id, owner, title, status, last_seq, created_at, updated_at, agent FROM sessions ORDER BY rowid;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at DESC);

CREATE TABLE messages_new (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    sk            INTEGER NOT NULL REFERENCES sessions (k),
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
INSERT INTO messages_new (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
    SELECT m.seq, m.id, s.k, m.run_id, m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error, m.metadata, m.parent_id, m.call_index, m.created_at
    FROM messages m JOIN sessions s ON s.id = m.session_id ORDER BY m.seq;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_session ON messages (sk, seq);
-- Exactly one ToolResult per tool call (docs/design.md §3).
CREATE UNIQUE INDEX messages_one_result ON messages (sk, tool_call_id) WHERE role = 'tool';

CREATE TABLE events_new (
    sk          INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    ref         TEXT,
    run_id      TEXT,
    PRIMARY KEY (sk, seq)
) WITHOUT ROWID;
INSERT INTO events_new (sk, seq, name, data, created_at, ref, run_id)
    SELECT s.k, e.seq, e.name, e.data, e.created_at, e.ref, e.run_id FROM events e JOIN sessions s ON s.id = e.session_id;
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;

CREATE TABLE trace_new (
    id          INTEGER PRIMARY KEY,
    sk          INTEGER NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
INSERT INTO trace_new (id, sk, run_id, kind, data, at)
    SELECT t.id, s.k, t.run_id, t.kind, t.data, t.at FROM trace t JOIN sessions s ON s.id = t.session_id ORDER BY t.id;
DROP TABLE trace;
ALTER TABLE trace_new RENAME TO trace;
CREATE INDEX trace_session ON trace (sk, id);

CREATE TABLE feed_new (
    owner        TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    sk           INTEGER NOT NULL,
    session_seq  INTEGER NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fanned       INTEGER NOT NULL DEFAULT 0,
    ref          TEXT,
    PRIMARY KEY (owner, seq)
) WITHOUT ROWID;
INSERT INTO feed_new (owner, seq, sk, session_seq, name, data, created_at, fanned, ref)
    SELECT f.owner, f.seq, s.k, f.session_seq, f.name, f.data, f.created_at, f.fanned, f.ref FROM feed f JOIN sessions s ON s.id = f.session_id;
DROP TABLE feed;
ALTER TABLE feed_new RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;
CREATE INDEX feed_prune ON feed (created_at) WHERE fanned = 1;
CREATE INDEX feed_session ON feed (sk);
COMMIT;
PRAGMA foreign_keys = ON;

-- +goose Down
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;
CREATE TABLE feed_old (
    owner        TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    session_id   TEXT NOT NULL,
    session_seq  INTEGER NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fanned       INTEGER NOT NULL DEFAULT 0,
    ref          TEXT,
    PRIMARY KEY (owner, seq)
) WITHOUT ROWID;
INSERT INTO feed_old (owner, seq, session_id, session_seq, name, data, created_at, fanned, ref)
    SELECT f.owner, f.seq, s.id, f.session_seq, f.name, f.data, f.created_at, f.fanned, f.ref FROM feed f JOIN sessions s ON s.k = f.sk;
DROP TABLE feed;
ALTER TABLE feed_old RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;
CREATE INDEX feed_session ON feed (session_id);
CREATE INDEX feed_prune ON feed (created_at) WHERE fanned = 1;

CREATE TABLE trace_old (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
INSERT INTO trace_old (id, session_id, run_id, kind, data, at)
    SELECT t.id, s.id, t.run_id, t.kind, t.data, t.at FROM trace t JOIN sessions s ON s.k = t.sk ORDER BY t.id;
DROP TABLE trace;
ALTER TABLE trace_old RENAME TO trace;
CREATE INDEX trace_session ON trace (session_id, id);

CREATE TABLE events_old (
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    ref         TEXT,
    run_id      TEXT,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
INSERT INTO events_old (session_id, seq, name, data, created_at, ref, run_id)
    SELECT s.id, e.seq, e.name, e.data, e.created_at, e.ref, e.run_id FROM events e JOIN sessions s ON s.k = e.sk;
DROP TABLE events;
ALTER TABLE events_old RENAME TO events;

CREATE TABLE messages_old (
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
INSERT INTO messages_old (seq, id, session_id, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
    SELECT m.seq, m.id, s.id, m.run_id, m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.is_error, m.metadata, m.parent_id, m.call_index, m.created_at
    FROM messages m JOIN sessions s ON s.k = m.sk ORDER BY m.seq;
DROP TABLE messages;
ALTER TABLE messages_old RENAME TO messages;
CREATE INDEX messages_session ON messages (session_id, seq);
CREATE UNIQUE INDEX messages_one_result ON messages (session_id, tool_call_id) WHERE role = 'tool';

CREATE TABLE sessions_old (
    id          TEXT PRIMARY KEY,
    owner       TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'idle',
    last_seq    INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    agent       TEXT NOT NULL DEFAULT ''
);
INSERT INTO sessions_old (rowid, id, owner, title, status, last_seq, created_at, updated_at, agent)
    SELECT k, id, owner, title, status, last_seq, created_at, updated_at, agent FROM sessions ORDER BY k;
DROP TABLE sessions;
ALTER TABLE sessions_old RENAME TO sessions;
CREATE INDEX sessions_owner_updated ON sessions (owner, updated_at DESC);
COMMIT;
PRAGMA foreign_keys = ON;
