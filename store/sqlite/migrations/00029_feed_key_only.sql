-- +goose Up
-- A feed entry's owner and number are its key (principals.k << 32 plus the
-- number, migration 00028): the row no longer repeats them as columns.
CREATE TABLE feed_new (
    k            INTEGER PRIMARY KEY,
    sk           INTEGER NOT NULL,
    session_seq  INTEGER NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fanned       INTEGER NOT NULL DEFAULT 0,
    ref          TEXT
);
INSERT INTO feed_new (k, sk, session_seq, name, data, created_at, fanned, ref)
    SELECT k, sk, session_seq, name, data, created_at, fanned, ref FROM feed ORDER BY k;
DROP TABLE feed;
ALTER TABLE feed_new RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;

-- +goose Down
CREATE TABLE feed_old (
    k            INTEGER PRIMARY KEY,
    owner        TEXT NOT NULL,
    seq          INTEGER NOT NULL CHECK (seq BETWEEN 1 AND 4294967295),
    sk           INTEGER NOT NULL,
    session_seq  INTEGER NOT NULL,
    name         TEXT NOT NULL,
    data         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    fanned       INTEGER NOT NULL DEFAULT 0,
    ref          TEXT
);
INSERT INTO feed_old (k, owner, seq, sk, session_seq, name, data, created_at, fanned, ref)
    SELECT f.k, p.owner, f.k & 4294967295, f.sk, f.session_seq, f.name, f.data, f.created_at, f.fanned, f.ref
    FROM feed f JOIN principals p ON p.k = f.k >> 32 ORDER BY f.k;
DROP TABLE feed;
ALTER TABLE feed_old RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;
