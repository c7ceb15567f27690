package store

import (
	"context"
	"encoding/json"
	"time"
)

// People is the part of a Store that serves people across their sessions
// (docs/design.md §12): the inbox, the principal's own event feed and the webhook
// outbox.
//
// The feed is written by the drivers themselves: every EventAppend of a
// FeedEvents name also appends, in the same transaction, a FeedEntry with
// the session owner's next feed sequence number. A feed row is also the
// webhook outbox row of that event: the dispatcher fans it out into one
// WebhookDelivery per configured webhook (WebhookEnqueue) and sends those
// after the commit, however often it must retry.
type People interface {
	// InboxList lists the owner's interactions across all its sessions
	// (GET /api/interactions): pending ones oldest first, resolved ones
	// (answered, cancelled, expired, not_resumable) most recently resolved
	// first. Another principal's rows are never returned.
	InboxList(ctx context.Context, p *InboxListParams) ([]*InboxEntry, error)
	// SessionPage lists the owner's sessions newest-updated first, after the
	// cursor Before (a session id of the owner) when set.
	SessionPage(ctx context.Context, p *SessionPageParams) ([]*Session, error)

	// FeedList lists the owner's feed entries with Seq > AfterSeq, ascending.
	FeedList(ctx context.Context, p *FeedListParams) ([]*FeedEntry, error)
	// FeedLastSeq is the owner's last feed sequence number (0 when none).
	FeedLastSeq(ctx context.Context, owner string) (int64, error)
	// FeedListUnfanned lists feed entries that were not yet fanned out into
	// webhook deliveries, oldest first, at most limit of them.
	FeedListUnfanned(ctx context.Context, limit int) ([]*FeedEntry, error)

	// WebhookEnqueue inserts the deliveries of one feed entry and marks it
	// fanned, in one transaction. A delivery for the same (Owner, Seq, Hook)
	// that exists already is kept as it is (so two replicas fanning out
	// the same entry at once write it once).
	WebhookEnqueue(ctx context.Context, p *WebhookEnqueueParams) error
	// WebhookClaim leases up to Limit pending deliveries that are due
	// (NextAt <= Now) and not leased (or whose lease expired) to Owner until
	// Until, and returns them. Concurrent claims (other replicas) never get
	// the same row (PostgreSQL: FOR UPDATE SKIP LOCKED).
	WebhookClaim(ctx context.Context, p *WebhookClaimParams) ([]*WebhookDelivery, error)
	// WebhookFinish records the outcome of one attempt of a delivery leased
	// to LeaseOwner and releases the lease. It reports false (and writes
	// nothing) when the lease was lost.
	WebhookFinish(ctx context.Context, p *WebhookFinishParams) (bool, error)
	// WebhookNextDue is the NextAt of the earliest pending delivery; the
	// zero time when there is none.
	WebhookNextDue(ctx context.Context) (time.Time, error)
	// WebhookList lists the deliveries of a session, oldest first.
	WebhookList(ctx context.Context, sessionID string) ([]*WebhookDelivery, error)

	// NotifyMessagePut records where a channel posted its message about an
	// interaction to a person (docs/design.md §17), replacing an earlier
	// record of the same (RequestID, Channel, Person).
	NotifyMessagePut(ctx context.Context, m *NotifyMessage) error
	// NotifyMessageList lists the messages posted about requestID, oldest
	// first.
	NotifyMessageList(ctx context.Context, requestID string) ([]*NotifyMessage, error)
}

// NotifyMessage is one message a notification channel posted about
// interaction RequestID of session SessionID to Person: for Slack, Address
// is the conversation (channel id) and Ref the message's ts.
type NotifyMessage struct {
	RequestID, Channel, Person, SessionID string
	Address, Ref                          string
	CreatedAt                             time.Time
}

// FeedEvents are the session event names that also go to the owner's feed
// (docs/design.md §12: GET /api/events carries these; §16 "Deadlines" for
// user_input_reminder).
var FeedEvents = []string{"user_input_required", "user_input_resolved", "user_input_reminder", "done"}

// IsFeedEvent reports whether an event called name goes to the feed.
func IsFeedEvent(name string) bool {
	for _, n := range FeedEvents {
		if n == name {
			return true
		}
	}
	return false
}

// FeedKey is the Subscribe key woken after any feed entry was committed (the
// webhook dispatcher listens to it). Session ids never contain ':'.
const FeedKey = "feed:"

// PrincipalKey is the Subscribe key woken after a feed entry of owner was
// committed (GET /api/events listens to it).
func PrincipalKey(owner string) string { return "principal:" + owner }

// DeadlineKey is the Subscribe key woken after a transaction (InTx) that
// inserted an interaction, and so its deadlines, committed: by this
// process or, on PostgreSQL, by any replica (the deadline scheduler
// listens to it).
const DeadlineKey = "deadline:"

// InboxStatus selects pending or resolved interactions in InboxListParams.
type InboxStatus string

// Inbox statuses.
const (
	InboxPending  InboxStatus = "pending"
	InboxResolved InboxStatus = "resolved"
)

// InboxListParams lists Owner's interactions of Status. Cursor is the id of
// an interaction of the previous page: for pending, entries after it in
// (CreatedAt, ID) order; for resolved, entries before it in (ResolvedAt, ID)
// order. An unknown cursor gives an empty list. Limit 0 means 100.
type InboxListParams struct {
	Owner  string
	Status InboxStatus
	Cursor string
	Limit  int
}

// InboxEntry is one interaction with its session's title, its run's agent
// and the run's status ("" when the run row is missing).
type InboxEntry struct {
	Interaction
	SessionTitle string
	Agent        string
	RunStatus    RunStatus
}

// SessionPageParams pages Owner's sessions; Before is the id of the last
// session of the previous page ("" for the first page). Limit 0 means 100.
type SessionPageParams struct {
	Owner, Before string
	Limit         int
}

// FeedEntry is one event of a principal's feed: event Name of session
// SessionID (its SessionSeq there) as the Seq-th entry of Owner's feed.
type FeedEntry struct {
	Owner      string
	Seq        int64
	SessionID  string
	SessionSeq int64
	Name       string
	Data       json.RawMessage
	CreatedAt  time.Time
}

// FeedListParams lists Owner's feed after AfterSeq. Limit 0 means 500.
type FeedListParams struct {
	Owner    string
	AfterSeq int64
	Limit    int
}

// Webhook delivery statuses.
const (
	WebhookPending   = "pending"
	WebhookDelivered = "delivered"
	WebhookFailed    = "failed" // gave up after the retry window
)

// WebhookDelivery is one message to one webhook (Standard Webhooks): ID is
// the webhook-id sent on every attempt, Body the exact JSON sent.
type WebhookDelivery struct {
	ID         string
	Hook       string // the webhook's URL
	Owner      string
	Seq        int64 // the feed entry's
	SessionID  string
	Type       string // interaction.requested | interaction.resolved | run.finished
	Body       json.RawMessage
	Status     string
	Attempts   int
	NextAt     time.Time
	LeaseOwner string
	LeaseUntil time.Time
	LastCode   int // HTTP status of the last attempt, 0 when none came back
	LastError  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// WebhookEnqueueParams fans feed entry (Owner, Seq) out into Deliveries
// (their ID, Hook, SessionID, Type and Body are used; they start pending,
// due at Now).
type WebhookEnqueueParams struct {
	Owner      string
	Seq        int64
	Deliveries []*WebhookDelivery
	Now        time.Time
}

// WebhookClaimParams leases due deliveries; see People.WebhookClaim.
type WebhookClaimParams struct {
	Owner      string
	Until, Now time.Time
	Limit      int
}

// WebhookFinishParams records one attempt: Status is WebhookDelivered,
// WebhookPending (retry at NextAt) or WebhookFailed.
type WebhookFinishParams struct {
	ID, LeaseOwner string
	Status         string
	NextAt         time.Time
	LastCode       int
	LastError      string
	Now            time.Time
	// Trace, when set, is the data of a "webhook" trace entry of the
	// delivery's session, written in the same transaction as the outcome and
	// only when the attempt wins: the next attempt, which may be leased the
	// moment the outcome commits, cannot trace before this one.
	Trace json.RawMessage
}
