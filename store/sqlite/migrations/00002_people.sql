-- +goose Up
-- A principal's feed (docs/design.md §12, GET /api/events): the lifecycle events of
-- every session it owns, numbered per principal. The row lock on principals
-- orders concurrent appends, so ids commit in order.
CREATE TABLE principals (
    owner     TEXT PRIMARY KEY,
    last_seq  INTEGER NOT NULL DEFAULT 0
);

-- Each feed row is also the webhook outbox row of its event: written in the
-- transaction that appends the event, fanned out into webhook_deliveries
-- after the commit.
CREATE TABLE feed (
    owner        TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    session_id   TEXT NOT NULL,
    session_seq  INTEGER NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fanned       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner, seq)
) WITHOUT ROWID;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;
CREATE INDEX feed_session ON feed (session_id);

CREATE TABLE webhook_deliveries (
    id           TEXT PRIMARY KEY,
    hook         TEXT NOT NULL,
    owner        TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    session_id   TEXT NOT NULL,
    type         TEXT NOT NULL,
    body         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      INTEGER NOT NULL,
    lease_owner  TEXT NOT NULL DEFAULT '',
    lease_until  INTEGER NOT NULL DEFAULT 0,
    last_code    INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_row ON webhook_deliveries (owner, seq, hook);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_session ON webhook_deliveries (session_id, created_at);

-- The inbox: a principal's interactions across sessions.
CREATE INDEX interactions_resolved ON interactions (session_id, resolved_at);

-- +goose Down
DROP INDEX interactions_resolved;
DROP TABLE webhook_deliveries;
DROP TABLE feed;
DROP TABLE principals;
