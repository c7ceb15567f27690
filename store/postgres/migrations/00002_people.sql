-- +goose Up
-- The same tables as store/sqlite/migrations/00002_people.sql: a principal's
-- feed (GET /api/events), numbered per principal under the principals row
-- lock so ids commit in order, and the webhook outbox fanned out of it.
CREATE TABLE principals (
    owner     TEXT PRIMARY KEY,
    last_seq  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE feed (
    owner        TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    session_id   TEXT NOT NULL,
    session_seq  BIGINT NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    fanned       BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (owner, seq)
);
CREATE INDEX feed_unfanned ON feed (created_at) WHERE NOT fanned;
CREATE INDEX feed_session ON feed (session_id);

CREATE TABLE webhook_deliveries (
    id           TEXT PRIMARY KEY,
    hook         TEXT NOT NULL,
    owner        TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    session_id   TEXT NOT NULL,
    type         TEXT NOT NULL,
    body         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      TIMESTAMPTZ NOT NULL,
    lease_owner  TEXT NOT NULL DEFAULT '',
    lease_until  TIMESTAMPTZ,
    last_code    INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX webhook_deliveries_row ON webhook_deliveries (owner, seq, hook);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_session ON webhook_deliveries (session_id, created_at);

CREATE INDEX interactions_resolved ON interactions (session_id, resolved_at);

-- +goose Down
DROP INDEX interactions_resolved;
DROP TABLE webhook_deliveries;
DROP TABLE feed;
DROP TABLE principals;
