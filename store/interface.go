package store

import (
	"context"
	"time"
)

// Executor is every query luban makes. Methods follow NounVerb(ctx, params)
// (one *NounVerbParams struct each) and are sorted by noun. Conditional writes return whether
// they won.
type Executor interface {
	// AssigneeAdd adds assignees to an interaction (AssigneeAddParams).
	AssigneeAdd(ctx context.Context, p *AssigneeAddParams) error
	// AssigneeDecide records an assignee's approval decision on a pending
	// interaction and returns the number of approvals it has, this one
	// included. It reports false (and writes nothing) when Person is not
	// an assignee, has already decided, or the interaction is not pending.
	// Concurrent decisions on one interaction are serialized on its row,
	// so each count is returned to exactly one caller.
	AssigneeDecide(ctx context.Context, p *AssigneeDecideParams) (int, bool, error)
	// AssigneeDelegate hands pending interaction RequestID from assignee
	// From to To (AssigneeDelegateParams) in one conditional write: it
	// wins only while the interaction is pending and From is an assignee
	// who has not decided; From's row is removed and To added (Via
	// AssigneeDelegate). It reports false (and writes nothing) otherwise.
	AssigneeDelegate(ctx context.Context, p *AssigneeDelegateParams) (bool, error)
	// AssigneeList lists an interaction's assignees in the order they were
	// added (none for an interaction no route assigned).
	AssigneeList(ctx context.Context, requestID string) ([]*Assignee, error)

	AuditInsert(ctx context.Context, p *AuditInsertParams) error
	AuditList(ctx context.Context, sessionID string) ([]*AuditEntry, error)

	// EventAppend assigns the session's next sequence number. Inside InTx the
	// event reaches Subscribe channels only after the commit. It returns the
	// event with Data as passed (with a MessageRef, its hole still empty:
	// EventList fills it).
	// DeadlineFire marks one deadline fired (DeadlineFireParams), a
	// conditional write: it wins only for a deadline not fired yet, so of
	// replicas racing for it one fires it.
	DeadlineFire(ctx context.Context, p *DeadlineFireParams) (bool, error)
	// DeadlineList lists an interaction's deadlines by Seq.
	DeadlineList(ctx context.Context, requestID string) ([]*Deadline, error)
	// DeadlineListDue lists deadlines due and not fired, earliest first,
	// whatever their interaction's status.
	DeadlineListDue(ctx context.Context, p *DeadlineListDueParams) ([]*Deadline, error)
	// DeadlineNextDue is the DueAt of the earliest deadline not fired; the
	// zero time when there is none.
	DeadlineNextDue(ctx context.Context) (time.Time, error)

	EventAppend(ctx context.Context, p *EventAppendParams) (*Event, error)
	// EventDelete deletes events (EventDeleteParams) and returns how many.
	EventDelete(ctx context.Context, p *EventDeleteParams) (int64, error)
	EventList(ctx context.Context, p *EventListParams) ([]*Event, error)

	InteractionGet(ctx context.Context, id string) (*Interaction, error)
	// InteractionGetState reads an interaction with its session, its run
	// and, when asked, its session's messages, in one call: what answering
	// it needs (docs/design.md §15). ErrNotFound when the interaction is
	// unknown.
	InteractionGetState(ctx context.Context, p *InteractionGetStateParams) (*InteractionState, error)
	InteractionGetByToolCall(ctx context.Context, sessionID, toolCallID string) (*Interaction, error)
	InteractionGetLastResolved(ctx context.Context, sessionID string) (*Interaction, error)
	InteractionGetPending(ctx context.Context, sessionID string) (*Interaction, error)
	InteractionInsert(ctx context.Context, p *InteractionInsertParams) (*Interaction, error)
	InteractionList(ctx context.Context, sessionID string) ([]*Interaction, error)
	// InteractionListPending is the pending interactions of session
	// sessionID (status "pending", whatever their expiresAt), in creation
	// order (createdAt, then id: the order InteractionList gives them, which
	// is call order for the questions one model message asked). It reads
	// them through the session's pending index, so its cost follows the
	// number pending, not the session's length. An unknown session, or one
	// with none pending, gives an empty list and no error.
	InteractionListPending(ctx context.Context, sessionID string) ([]*Interaction, error)
	InteractionListExpired(ctx context.Context, p *InteractionListExpiredParams) ([]*Interaction, error)
	InteractionResolve(ctx context.Context, p *InteractionResolveParams) (bool, error)
	// InteractionResolveRun resolves every interaction of a run that is still
	// pending, whatever its expiresAt, and returns them as resolved. It is
	// how a run that ends closes what it left open, in the transaction that
	// ends it.
	InteractionResolveRun(ctx context.Context, p *InteractionResolveRunParams) ([]*Interaction, error)
	// InteractionSign stores the signature of a resolved interaction's
	// receipt (InteractionResolve stores it with the answer; a row that
	// InteractionResolveRun closed gets it here, in the same transaction).
	InteractionSign(ctx context.Context, p *InteractionSignParams) error

	MessageInsert(ctx context.Context, p *MessageInsertParams) (*Message, error)
	MessageList(ctx context.Context, sessionID string) ([]*Message, error)

	// RunCheckpoint, RunFinish, RunPause and RunResume are the run's
	// transitions (docs/design.md §4), each one conditional write that reports
	// whether it won. Pausing or ending a run releases its lease.
	RunCheckpoint(ctx context.Context, p *RunCheckpointParams) (bool, error)
	// RunFinish also sets the run's session's status to p.To (not its
	// updated_at: Session.UpdatedAt) when it wins.
	RunFinish(ctx context.Context, p *RunFinishParams) (bool, error)
	RunGet(ctx context.Context, id string) (*Run, error)
	// RunHold writes a waiting run's row and leaves it waiting
	// (RunHoldParams); it reports false when the run is not waiting_input.
	RunHold(ctx context.Context, p *RunHoldParams) (bool, error)
	RunGetActive(ctx context.Context, sessionID string) (*Run, error)
	RunInsert(ctx context.Context, p *RunInsertParams) (*Run, error)
	RunLease(ctx context.Context, p *RunLeaseParams) (bool, error)
	RunListRecoverable(ctx context.Context, p *RunListRecoverableParams) ([]*Run, error)
	// RunPause also sets the run's session waiting_input (its status,
	// not its updated_at: Session.UpdatedAt) when it wins.
	RunPause(ctx context.Context, p *RunPauseParams) (bool, error)
	// RunResume also sets the run's session running (its status, not its
	// updated_at) when it wins; with Settled it wins only when the run
	// waits on no other interaction.
	RunResume(ctx context.Context, p *RunResumeParams) (bool, error)

	// RowsInsert writes the rows of one transition in one call
	// (RowsInsertParams), as MessageInsert, EventAppend, TraceInsert and
	// AuditInsert would one by one. Inside InTx a driver may report a
	// duplicate tool result by failing the transaction instead (InTx then
	// returns an error wrapping ErrDuplicate): a caller rolls back on any
	// error of RowsInsert.
	RowsInsert(ctx context.Context, p *RowsInsertParams) (*RowsInserted, error)

	SessionCreate(ctx context.Context, p *SessionCreateParams) (*Session, error)
	SessionGet(ctx context.Context, id string) (*Session, error)
	SessionList(ctx context.Context, p *SessionListParams) ([]*Session, error)
	SessionSetStatus(ctx context.Context, p *SessionSetStatusParams) error

	TraceInsert(ctx context.Context, p *TraceInsertParams) error
	TraceList(ctx context.Context, sessionID string) ([]*TraceEntry, error)
}

// Tx is an Executor inside one transaction.
type Tx interface {
	Executor
}

// Store is a database. Reads and single writes may be made on it directly;
// multi-row changes go through InTx.
type Store interface {
	Executor
	People
	MCPTasks
	// InTx runs fn in one transaction: committed when fn returns nil, rolled
	// back otherwise (fn's error is returned). Events appended in fn are
	// announced to subscribers after the commit.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Subscribe returns a channel that receives a value (coalesced, never
	// blocking the writer) after events of sessionID were committed, and a
	// func to unsubscribe. The event log stays the source of truth: a
	// subscriber re-reads it with EventList after each wake-up.
	Subscribe(sessionID string) (<-chan struct{}, func())
	// Follow is Subscribe with the events: the Follower is woken when
	// Subscribe's channel would be, and its Take returns the events that
	// commits of this process appended to sessionID, complete and in
	// commit order, or says to read the log (another process's commit, a
	// driver that hands none, a deletion). What it hands is what EventList
	// returns for the same events, byte for byte; the log stays the source
	// of truth, and a follower that sees a gap in the numbers reads it.
	// The func unregisters the Follower.
	Follow(sessionID string) (*Follower, func())
	// Durable reports whether rows survive a restart ("memory" does not).
	Durable() bool
	// HoldInstance marks the process instance id (a lease owner) alive
	// until Close, by a lock the operating system or the database server
	// drops the moment the process dies (kill -9 included): on SQLite an
	// open-file-description lock on <db>-instances, on PostgreSQL an
	// advisory lock held by a connection of its own.
	HoldInstance(ctx context.Context, id string) error
	// InstanceAlive reports whether a process holding instance id (this
	// one or another on the same database) is alive, without waiting for
	// any lease to run out (docs/design.md §23, "whose process died").
	// Where it cannot tell (SQLite on a system without OFD locks) it
	// reports true.
	InstanceAlive(ctx context.Context, id string) (bool, error)
	Close() error
}
