-- +goose Up
-- The messages a notification channel posted for an interaction (docs/design.md
-- §17): where each person's Slack message is (channel and ts), so that it is
-- updated to the receipt when the question is resolved, wherever.
CREATE TABLE notify_messages (
    request_id  TEXT NOT NULL,
    channel     TEXT NOT NULL,
    person      TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    address     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (request_id, channel, person)
) WITHOUT ROWID;
CREATE INDEX notify_messages_session ON notify_messages (session_id);

-- +goose Down
DROP TABLE notify_messages;
