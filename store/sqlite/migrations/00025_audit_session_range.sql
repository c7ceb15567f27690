-- +goose Up
-- A session's audit entries are a range of the table's own b-tree: an
-- entry's id is its session's key (sessions.k) shifted left by 32 bits plus
-- its number in the session (store/sqlite/rowbuf.go, auditOf), as a trace
-- entry's is, so AuditList reads them without an index and an ask or an
-- answer no longer writes a leaf of audit_session. The entries stored
-- before keep their ids (below 2³², as an entry of no session's and a
-- deleted session's): audit_session indexes those only. log_seqs keeps the
-- largest id Prune deleted of each range ('audit:' and the key). No row
-- changes.
DROP INDEX audit_session;
CREATE INDEX audit_session ON audit (session_id, id) WHERE id < 4294967296;

-- +goose Down
-- The ids go on from the largest given, as they did: the ranges' marks
-- fold into 'audit'.
INSERT INTO log_seqs (name, last) SELECT 'audit', MAX(last) FROM log_seqs WHERE name LIKE 'audit:%'
    HAVING MAX(last) IS NOT NULL ON CONFLICT (name) DO UPDATE SET last = MAX(last, excluded.last);
DELETE FROM log_seqs WHERE name LIKE 'audit:%';
DROP INDEX audit_session;
CREATE INDEX audit_session ON audit (session_id, id);
