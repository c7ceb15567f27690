-- +goose Up
-- A session keeps the agent its first run chose (docs/design.md §9); '' for sessions
-- made before agents were configurable (they use the default agent).
ALTER TABLE sessions ADD COLUMN agent TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sessions DROP COLUMN agent;
