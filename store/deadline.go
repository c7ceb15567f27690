package store

import (
	"encoding/json"
	"time"
)

// Deadline kinds (docs/design.md §16 "Deadlines"): when a pending
// interaction's assignees are notified again, when its escalation targets
// are added, when it times out.
const (
	DeadlineRemind   = "remind"
	DeadlineEscalate = "escalate"
	DeadlineTimeout  = "timeout"
)

// Deadline is one stored due time of a pending interaction. Every
// interaction has exactly one timeout deadline (Seq 0, due at its
// ExpiresAt) written with it by InteractionInsert, and the reminders and
// escalation of its route (Seq 1, 2, …). FiredAt is the zero time until the
// deadline fired (DeadlineFire won) or was found moot (its interaction no
// longer pending). Data is the caller's: the agent keeps the timeout's
// action and the escalation's targets in it.
type Deadline struct {
	RequestID string
	SessionID string
	Seq       int
	Kind      string
	DueAt     time.Time
	FiredAt   time.Time
	Data      json.RawMessage
}

// DeadlineSpec is one deadline InteractionInsert writes besides the
// timeout: a remind or escalate Kind due at DueAt with Data.
type DeadlineSpec struct {
	Kind  string
	DueAt time.Time
	Data  json.RawMessage
}

// DeadlineListDueParams lists at most Limit (0: 100) deadlines not fired
// with DueAt <= Now, earliest first.
type DeadlineListDueParams struct {
	Now   time.Time
	Limit int
}

// DeadlineFireParams marks deadline (RequestID, Seq) fired at Now. With
// Pending set it wins only while the interaction is still pending (a
// reminder or escalation of an answered question is not sent); without it,
// it closes a deadline whatever its interaction's status.
type DeadlineFireParams struct {
	RequestID string
	Seq       int
	Pending   bool
	Now       time.Time
}

// AssigneeDelegateParams hands interaction RequestID from assignee From to
// person To at Now (docs/design.md §16 "delegate").
type AssigneeDelegateParams struct {
	RequestID, From, To string
	Now                 time.Time
}
