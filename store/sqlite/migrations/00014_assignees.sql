-- +goose Up
-- Who may answer an interaction, and who did (docs/design.md §16). route holds the
-- settings of the route that assigned it (JSON; NULL when no route matched:
-- the session's owner is its only assignee and it has no assignee rows).
-- An assignee row names one person; decision is their approval decision of
-- a quorum approval ('' until they decide). The person index is the
-- assignee's inbox: interactions of sessions they do not own. decided_by
-- names who resolved it and, for a quorum, every decision (JSON; NULL when
-- nobody is named).
ALTER TABLE interactions ADD COLUMN route TEXT;
ALTER TABLE interactions ADD COLUMN decided_by TEXT;
CREATE TABLE interaction_assignees (
    request_id  TEXT NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
    person      TEXT NOT NULL,
    pos         INTEGER NOT NULL,
    via         TEXT NOT NULL,
    decision    TEXT NOT NULL DEFAULT '',
    added_at    INTEGER NOT NULL,
    decided_at  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (request_id, person)
) WITHOUT ROWID;
CREATE INDEX interaction_assignees_person ON interaction_assignees (person, request_id);

-- +goose Down
DROP TABLE interaction_assignees;
ALTER TABLE interactions DROP COLUMN decided_by;
ALTER TABLE interactions DROP COLUMN route;
