// Package people serves people across their sessions (docs/design.md §12): the
// inbox (every request of a principal, wherever it was asked), the
// principal's own event stream, and signed webhooks (Standard Webhooks)
// sent from a transactional outbox by a Dispatcher.
//
// The store writes the principal feed itself, in the transaction that
// appends each user_input_required, user_input_resolved and done event
// (store.People); this package reads it, and the Dispatcher turns each feed
// entry into one delivery per configured webhook.
package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// ErrBadCursor is returned for a cursor that is not one of the caller's
// interactions or sessions (a 400 invalid_request).
var ErrBadCursor = errors.New("people: unknown cursor")

// Inbox answers GET /api/interactions and GET /api/sessions from the store.
// The zero value is not usable; set Store.
type Inbox struct {
	Store store.Store
	// AgentExists reports whether an agent of that name is configured; a
	// pending request of an unknown agent's run is not resumable (docs/design.md
	// §4). Nil means every agent exists.
	AgentExists func(name string) bool
	// DefaultAgent is the agent a session that keeps none runs (one an
	// outside program's question created, or one older than configurable
	// agents): GET /api/sessions shows it as the session's agent, as GET
	// /api/sessions/{id} does.
	DefaultAgent string
	// Refresh, when set, brings a pending request up to date as it is
	// listed (its assignees and whom it waits for, docs/design.md §16).
	Refresh func(ctx context.Context, it *store.Interaction, req *api.InputRequest) error
}

// clampLimit applies api.DefaultPageLimit and api.MaxPageLimit.
func clampLimit(n int) int {
	if n <= 0 {
		return api.DefaultPageLimit
	}
	return min(n, api.MaxPageLimit)
}

// Interactions lists owner's interactions of status (pending oldest first,
// resolved most recently resolved first), after cursor (an id from a
// previous page's Next) when set, at most limit (clamped to 1..MaxPageLimit,
// 0 = DefaultPageLimit). A cursor that is not one of owner's interactions of
// that status is ErrBadCursor.
func (in *Inbox) Interactions(ctx context.Context, owner string, status api.InboxStatus, cursor string, limit int) (*api.InteractionList, error) {
	limit = clampLimit(limit)
	if cursor != "" {
		it, err := in.Store.InteractionGet(ctx, cursor)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrBadCursor
		}
		if err != nil {
			return nil, err
		}
		ss, err := in.Store.SessionGet(ctx, it.SessionID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err != nil || (it.Status == string(api.StatusPending)) != (status == api.InboxPending) {
			return nil, ErrBadCursor
		}
		if ss.Owner != owner {
			// An interaction of another principal's session is a cursor
			// of the owner's only when it is assigned to them.
			as, err := in.Store.AssigneeList(ctx, it.ID)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(as, func(a *store.Assignee) bool { return a.Person == owner }) {
				return nil, ErrBadCursor
			}
		}
	}
	rows, err := in.Store.InboxList(ctx, &store.InboxListParams{Owner: owner, Status: store.InboxStatus(status), Cursor: cursor, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &api.InteractionList{Interactions: make([]api.InboxItem, 0, len(rows))}
	for _, r := range rows {
		var req api.InputRequest
		if err := json.Unmarshal(r.Request, &req); err != nil {
			return nil, fmt.Errorf("people: stored request %s: %w", r.ID, err)
		}
		item := api.InboxItem{InputRequest: req, Status: api.Status(r.Status), SessionTitle: r.SessionTitle, Agent: r.Agent}
		if r.Status == string(api.StatusPending) {
			item.Resumable = r.RunStatus != "" && !r.RunStatus.Terminal() && (in.AgentExists == nil || in.AgentExists(r.Agent))
			if in.Refresh != nil {
				if err := in.Refresh(ctx, &r.Interaction, &item.InputRequest); err != nil {
					return nil, err
				}
			}
		} else {
			item.WaitingFor = nil // the receipt says who decided
			item.Resumable = false
			item.Receipt = ReceiptOf(&r.Interaction)
		}
		out.Interactions = append(out.Interactions, item)
	}
	if len(rows) == limit {
		out.Next = rows[len(rows)-1].ID
	}
	return out, nil
}

// Sessions lists owner's sessions newest-updated first, after the session
// before (from a previous page's Next) when set, at most limit. A before
// that is not one of owner's sessions is ErrBadCursor.
func (in *Inbox) Sessions(ctx context.Context, owner, before string, limit int) (*api.SessionList, error) {
	limit = clampLimit(limit)
	if before != "" {
		ss, err := in.Store.SessionGet(ctx, before)
		if errors.Is(err, store.ErrNotFound) || (err == nil && ss.Owner != owner) {
			return nil, ErrBadCursor
		}
		if err != nil {
			return nil, err
		}
	}
	list, err := in.Store.SessionPage(ctx, &store.SessionPageParams{Owner: owner, Before: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := &api.SessionList{Sessions: make([]api.SessionView, 0, len(list))}
	for _, ss := range list {
		agent := ss.Agent
		if agent == "" {
			agent = in.DefaultAgent
		}
		out.Sessions = append(out.Sessions, api.SessionView{ID: ss.ID, Title: ss.Title, Status: ss.Status, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt, Agent: agent})
	}
	if len(list) == limit {
		out.Next = list[len(list)-1].ID
	}
	return out, nil
}
