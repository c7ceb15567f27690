-- +goose Up
-- The due times of pending interactions (docs/design.md §16 "Deadlines"):
-- each interaction's timeout (seq 0, at its expires_at) and its route's
-- reminders and escalation. fired_at is set once, by the conditional write
-- that fires the deadline (or closes it, its question resolved), so a
-- restart or a second process never fires one twice. Pending interactions
-- asked before this migration get their timeout here.
CREATE TABLE interaction_deadlines (
    request_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    session_id  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    due_at      INTEGER NOT NULL,
    fired_at    INTEGER,
    data        TEXT,
    PRIMARY KEY (request_id, seq)
) WITHOUT ROWID;
CREATE INDEX interaction_deadlines_due ON interaction_deadlines (due_at) WHERE fired_at IS NULL;
CREATE INDEX interaction_deadlines_session ON interaction_deadlines (session_id);
INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at)
    SELECT id, 0, session_id, 'timeout', expires_at FROM interactions WHERE status = 'pending';

-- +goose Down
DROP TABLE interaction_deadlines;
