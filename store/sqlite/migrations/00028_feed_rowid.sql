-- +goose Up
-- The feed is a rowid table: an entry's key is its owner's key
-- (principals.k, new here) shifted left by 32 bits plus its number in the
-- owner's feed (store/sqlite/rowbuf.go, feedKey), so an owner's entries
-- are one range of the table's own b-tree and an entry is appended at the
-- end of it. As a WITHOUT ROWID table on (owner, seq) an append into a
-- full last leaf rebalanced it with its siblings and their parent (as
-- events did before 00019): 4.4 pages a cycle for 3 entries. Every owner
-- with feed entries gets a principals row; owner and seq stay columns.
CREATE TABLE principals_new (
    k         INTEGER PRIMARY KEY,
    owner     TEXT NOT NULL UNIQUE,
    last_seq  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO principals_new (owner, last_seq) SELECT owner, last_seq FROM principals ORDER BY owner;
INSERT INTO principals_new (owner) SELECT DISTINCT owner FROM feed WHERE owner NOT IN (SELECT owner FROM principals_new) ORDER BY owner;
DROP TABLE principals;
ALTER TABLE principals_new RENAME TO principals;

CREATE TABLE feed_new (
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
INSERT INTO feed_new (k, owner, seq, sk, session_seq, name, data, created_at, fanned, ref)
    SELECT (p.k << 32) + f.seq, f.owner, f.seq, f.sk, f.session_seq, f.name, f.data, f.created_at, f.fanned, f.ref
    FROM feed f JOIN principals p ON p.owner = f.owner ORDER BY 1;
DROP TABLE feed;
ALTER TABLE feed_new RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;

-- +goose Down
CREATE TABLE feed_old (
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
INSERT INTO feed_old (owner, seq, sk, session_seq, name, data, created_at, fanned, ref)
    SELECT owner, seq, sk, session_seq, name, data, created_at, fanned, ref FROM feed ORDER BY owner, seq;
DROP TABLE feed;
ALTER TABLE feed_old RENAME TO feed;
CREATE INDEX feed_unfanned ON feed (created_at) WHERE fanned = 0;

CREATE TABLE principals_old (
    owner     TEXT PRIMARY KEY,
    last_seq  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO principals_old (owner, last_seq) SELECT owner, last_seq FROM principals ORDER BY owner;
DROP TABLE principals;
ALTER TABLE principals_old RENAME TO principals;
