-- +goose Up
-- The signature of an interaction's receipt (docs/design.md §17), a compact
-- JWS written with the resolution; '' for rows resolved before signing.
ALTER TABLE interactions ADD COLUMN receipt_jws TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE interactions DROP COLUMN receipt_jws;
