package agent

import (
	"context"
	"errors"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// Question is interaction requestID as an action link shows it to by
// (docs/design.md §17): the request (Resumable computed now), its status
// and, once resolved, its receipt. Only someone who may answer it
// (mayAnswer) sees it; anyone else, like an unknown id, gets
// ErrInteractionNotFound. It checks no token: the caller holds a grant
// for by and requestID.
func (r *Runner) Question(ctx context.Context, by, requestID string) (*api.InteractionView, error) {
	it, err := r.st.InteractionGet(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	sess, err := r.st.SessionGet(ctx, it.SessionID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := r.mayAnswer(ctx, by, it, sess.Owner); err != nil {
		return nil, err
	}
	req, err := r.inputRequest(ctx, it)
	if err != nil {
		return nil, err
	}
	v := &api.InteractionView{Request: *req, Status: api.Status(it.Status)}
	if v.Status != api.StatusPending {
		v.Receipt = receiptOf(it)
	}
	return v, nil
}

// QuestionExpiry is when interaction requestID stops taking answers (its
// expiresAt): what an action link's grant expires with. Unknown ids are
// ErrInteractionNotFound. It checks no one.
func (r *Runner) QuestionExpiry(ctx context.Context, requestID string) (time.Time, error) {
	it, err := r.st.InteractionGet(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, ErrInteractionNotFound
	}
	if err != nil {
		return time.Time{}, err
	}
	return it.ExpiresAt, nil
}
