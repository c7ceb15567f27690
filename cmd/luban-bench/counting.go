package main

import (
	"context"
	"sync/atomic"

	"github.com/lubanhq/luban/store"
)

// countingStore counts the transactions luban commits: one per InTx and one
// per write made outside InTx (SQLite autocommit; EventAppend outside InTx is
// one transaction since issue 8, two autocommits before). The ceiling replays
// that many commits per cycle.
type countingStore struct {
	store.Store
	commits atomic.Int64
}

func (c *countingStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	err := c.Store.InTx(ctx, fn)
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

func (c *countingStore) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	c.commits.Add(1)
	return c.Store.AuditInsert(ctx, p)
}

func (c *countingStore) EventAppend(ctx context.Context, p *store.EventAppendParams) (*store.Event, error) {
	c.commits.Add(1)
	return c.Store.EventAppend(ctx, p)
}

func (c *countingStore) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	c.commits.Add(1)
	return c.Store.InteractionInsert(ctx, p)
}

func (c *countingStore) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.InteractionResolve(ctx, p)
}

func (c *countingStore) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	c.commits.Add(1)
	return c.Store.MessageInsert(ctx, p)
}

func (c *countingStore) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	c.commits.Add(1)
	return c.Store.RunInsert(ctx, p)
}

func (c *countingStore) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.RunLease(ctx, p)
}

func (c *countingStore) RunCheckpoint(ctx context.Context, p *store.RunCheckpointParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.RunCheckpoint(ctx, p)
}

func (c *countingStore) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.RunFinish(ctx, p)
}

func (c *countingStore) RunPause(ctx context.Context, p *store.RunPauseParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.RunPause(ctx, p)
}

func (c *countingStore) RunResume(ctx context.Context, p *store.RunResumeParams) (bool, error) {
	c.commits.Add(1)
	return c.Store.RunResume(ctx, p)
}

func (c *countingStore) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (*store.Session, error) {
	c.commits.Add(1)
	return c.Store.SessionCreate(ctx, p)
}

func (c *countingStore) SessionSetStatus(ctx context.Context, p *store.SessionSetStatusParams) error {
	c.commits.Add(1)
	return c.Store.SessionSetStatus(ctx, p)
}

func (c *countingStore) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	c.commits.Add(1)
	return c.Store.TraceInsert(ctx, p)
}
