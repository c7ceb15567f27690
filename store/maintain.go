package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Maintainer is what operating a database needs beyond Executor (docs/design.md
// §14): deleting or renaming a session, pruning old rows and counting for
// /metrics.
// Both drivers implement it; callers find it with a type assertion on a
// Store.
type Maintainer interface {
	// SessionDelete removes session id and every row that belongs to it:
	// runs, messages, interactions, events and trace entries. Audit entries
	// are kept (they hold no free text and age out with PruneParams.
	// AuditBefore). Errors: ErrNotFound when the session does not exist,
	// ErrRunActive while it has a run in running or waiting_input.
	SessionDelete(ctx context.Context, id string) error
	// SessionSetTitle replaces session id's title (the caller validated it);
	// updated_at is left alone, so a rename does not reorder the session
	// list. Errors: ErrNotFound when the session does not exist.
	SessionSetTitle(ctx context.Context, id, title string) error
	// Prune deletes, in one call, at most Limit sessions' worth of old rows
	// (call it again while the result is not zero): the events and trace
	// entries of sessions without an active run whose last activity (the
	// later of updated_at and their last run's end) is before
	// EventsBefore; principal feed entries (GET
	// /api/events) written before EventsBefore that the webhook dispatcher
	// already fanned out (an entry not fanned out yet is an outbox row and
	// is kept whatever its age); webhook deliveries that ended (delivered or
	// failed) last updated before EventsBefore (pending ones are kept);
	// audit entries older than AuditBefore. A zero time skips that part.
	Prune(ctx context.Context, p *PruneParams) (*PruneResult, error)
	// Stats counts runs by status and pending interactions.
	Stats(ctx context.Context) (*Stats, error)
}

// PruneParams bounds one Prune call.
type PruneParams struct {
	// EventsBefore: sessions without an active run last active before it
	// lose their events and trace entries; fanned-out feed entries and
	// ended webhook deliveries older than it are deleted. Zero skips.
	EventsBefore time.Time
	// AuditBefore: audit entries older than it are deleted. Zero skips.
	AuditBefore time.Time
	// Limit is the number of sessions (and of audit, feed and delivery
	// rows ×100 each) handled per call, so that one call holds the writer briefly. 0 means 100.
	Limit int
}

// PruneResult counts the rows one Prune call deleted.
type PruneResult struct {
	Events, Trace, Audit int64
	// Feed counts principal feed entries, Webhooks ended webhook deliveries.
	Feed, Webhooks int64
}

// Total is the number of rows deleted.
func (r *PruneResult) Total() int64 { return r.Events + r.Trace + r.Audit + r.Feed + r.Webhooks }

// Add adds the counts of o to r.
func (r *PruneResult) Add(o *PruneResult) {
	r.Events += o.Events
	r.Trace += o.Trace
	r.Audit += o.Audit
	r.Feed += o.Feed
	r.Webhooks += o.Webhooks
}

// Stats is what Maintainer.Stats counts.
type Stats struct {
	// Runs maps every run status present to its number of runs.
	Runs map[RunStatus]int64
	// PendingInteractions is the number of questions still waiting.
	PendingInteractions int64
}

// Migration is one schema migration and whether it is applied.
type Migration struct {
	Version   int64
	Name      string // the migration's file name
	Applied   bool
	AppliedAt time.Time // zero when pending (or unknown)
}

// ErrSchemaTooNew is the error Open wraps when a newer luban migrated the
// database past the newest migration this binary knows: an older binary
// would misread rows it does not know the shape of, so it refuses to start
// (docs/operations.md "Upgrading": run the newer binary, or restore the
// backup taken before the upgrade).
var ErrSchemaTooNew = errors.New("the database was migrated by a newer luban")

// CheckSchemaVersion returns an error wrapping ErrSchemaTooNew when
// current, the database's schema version, is above known, the newest
// migration of this binary.
func CheckSchemaVersion(current, known int64) error {
	if current > known {
		return fmt.Errorf("%w: its schema is at version %d, this binary knows versions up to %d; run the newer luban, or restore the backup taken before the upgrade", ErrSchemaTooNew, current, known)
	}
	return nil
}
