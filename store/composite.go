package store

import (
	"context"
	"errors"
)

// InteractionGetStateParams reads interaction ID with what answering it
// needs; Messages also reads its session's messages.
type InteractionGetStateParams struct {
	ID       string
	Messages bool
}

// InteractionState is an interaction with its session, its run (nil when
// the run's row is gone) and, when asked for, its session's messages in
// order (nil otherwise).
type InteractionState struct {
	Interaction *Interaction
	Session     *Session
	Run         *Run
	Messages    []*Message
}

// GetInteractionState is InteractionGetState made of ex's single reads,
// for a driver that has no better way: ErrNotFound when the interaction or
// its session does not exist.
func GetInteractionState(ctx context.Context, ex Executor, p *InteractionGetStateParams) (*InteractionState, error) {
	it, err := ex.InteractionGet(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	out := &InteractionState{Interaction: it}
	if out.Session, err = ex.SessionGet(ctx, it.SessionID); err != nil {
		return nil, err
	}
	if out.Run, err = ex.RunGet(ctx, it.RunID); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if p.Messages {
		if out.Messages, err = ex.MessageList(ctx, it.SessionID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RowsInsertParams are the rows one transition writes together, written
// in this order: Messages, Events, Traces, Audits (an event may reference a
// message of the same call: EventAppendParams.MessageRef).
type RowsInsertParams struct {
	Messages []*MessageInsertParams
	Events   []*EventAppendParams
	Traces   []*TraceInsertParams
	Audits   []*AuditInsertParams
}

// RowsInserted is what RowsInsert returns: the messages and events as
// MessageInsert and EventAppend return them, in the order given.
type RowsInserted struct {
	Messages []*Message
	Events   []*Event
}

// InsertRows is RowsInsert made of ex's single writes, for a driver that
// has no better way. The first error stops it (inside InTx it rolls the
// transaction back).
func InsertRows(ctx context.Context, ex Executor, p *RowsInsertParams) (*RowsInserted, error) {
	out := &RowsInserted{Messages: make([]*Message, 0, len(p.Messages)), Events: make([]*Event, 0, len(p.Events))}
	for _, m := range p.Messages {
		msg, err := ex.MessageInsert(ctx, m)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, msg)
	}
	for _, e := range p.Events {
		ev, err := ex.EventAppend(ctx, e)
		if err != nil {
			return nil, err
		}
		out.Events = append(out.Events, ev)
	}
	for _, t := range p.Traces {
		if err := ex.TraceInsert(ctx, t); err != nil {
			return nil, err
		}
	}
	for _, a := range p.Audits {
		if err := ex.AuditInsert(ctx, a); err != nil {
			return nil, err
		}
	}
	return out, nil
}
