-- +goose Up
-- Retention (docs/design.md §14, --retain): old feed entries that were fanned out
-- and webhook deliveries that ended are pruned by age.
CREATE INDEX feed_prune ON feed (created_at) WHERE fanned = 1;
CREATE INDEX webhook_deliveries_ended ON webhook_deliveries (updated_at) WHERE status <> 'pending';

-- +goose Down
DROP INDEX webhook_deliveries_ended;
DROP INDEX feed_prune;
