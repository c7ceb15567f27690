-- +goose Up
-- luban_lost fails the statement (and so its transaction) with SQLSTATE
-- LB001: a conditional write that had to win lost. A write whose answer the
-- client does not wait for (a pipelined MustWin write) calls it when it
-- changed no row, so the statements after it in the same pipeline, COMMIT
-- included, never run.
-- +goose StatementBegin
CREATE FUNCTION luban_lost(what TEXT) RETURNS INTEGER LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'LB001', MESSAGE = what || ': lost';
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION luban_lost(TEXT);
