package store

import (
	"encoding/json"
	"time"
)

// SessionCreateParams creates a session with status Status ("idle" when
// empty).
type SessionCreateParams struct {
	ID, Owner, Title string
	// Agent is the name of the agent the session keeps (docs/design.md §9).
	Agent  string
	Status string
	Now    time.Time
}

// SessionListParams lists a principal's sessions, newest first.
type SessionListParams struct {
	Owner string
	Limit int // 0 means 100
}

// SessionSetStatusParams records the session's latest run status.
type SessionSetStatusParams struct {
	ID, Status string
	Now        time.Time
}

// RunInsertParams inserts a run in status running, leased to LeaseOwner,
// and sets its session's status to running and updated_at to Now (as
// SessionSetStatus would). It fails with
// ErrRunActive when the session already has an active run.
type RunInsertParams struct {
	ID, SessionID, Agent string
	LeaseOwner           string
	LeaseUntil           time.Time
	Now                  time.Time
}

// RunCheckpointParams records a step of a run that is still running and
// leased to LeaseOwner (docs/design.md §4: a model turn, a tool result): the run
// stays running; Steps and InvalidStreak are written when not nil. It loses
// when the run is no longer running under that lease.
type RunCheckpointParams struct {
	ID, LeaseOwner string
	Steps          *int
	InvalidStreak  *int
	Now            time.Time
}

// RunPauseParams moves a run that is running and leased to LeaseOwner to
// waiting_input (docs/design.md §4: a question was put). A paused run holds no lease.
// Steps and InvalidStreak, when not nil, are written in the same statement
// (a step's RunCheckpoint and the pause in one write of the row).
type RunPauseParams struct {
	ID, LeaseOwner string
	Steps          *int
	InvalidStreak  *int
	Now            time.Time
	// MustWin: as InteractionResolveParams.MustWin.
	MustWin bool
}

// RunResumeParams moves a run waiting_input back to running, leased to
// LeaseOwner until LeaseUntil (docs/design.md §4: an answer came).
//
// Settled, when true, resumes the run only when it waits on nothing else
// (docs/design.md §32: a run that asked several questions at once resumes
// on the last resolution): no interaction of the run is pending besides
// those Resolving names (the ones the same transaction resolves). A
// resume that loses on that condition writes nothing, like one that loses
// on the status.
type RunResumeParams struct {
	ID, LeaseOwner string
	LeaseUntil     time.Time
	Now            time.Time
	Settled        bool
	Resolving      []string
	// MustWin: as InteractionResolveParams.MustWin. A caller that goes on
	// when the resume loses (it holds the run instead) sets it only when
	// it expects the resume to win, and runs the transaction again
	// without it after an ErrLost (docs/design.md §34). A driver that
	// queues the write may number the session's events appended after it
	// only at the commit: their *Event's Seq is set when InTx returns, so
	// a caller reads it then, not inside the transaction.
	MustWin bool
}

// RunHoldParams writes the row of a run waiting_input (its updated_at)
// without changing its status: the first write of a transaction that
// resolves one of several questions of the run and does not resume it
// (docs/design.md §32). It loses when the run is not waiting_input. Two
// such transactions of one run write the run's row first, so they take
// turns, and the second sees what the first resolved.
type RunHoldParams struct {
	ID  string
	Now time.Time
}

// RunFinishParams ends a run in To, a terminal status (docs/design.md §4), from one
// of From (running and waiting_input when empty); when LeaseOwner is set the
// run must also be leased to it. Error is stored when not empty. An ended
// run holds no lease. Steps and InvalidStreak, when not nil, are written in
// the same statement (a step's RunCheckpoint and the end in one write).
type RunFinishParams struct {
	ID            string
	From          []RunStatus
	LeaseOwner    string
	To            RunStatus
	Error         string
	Steps         *int
	InvalidStreak *int
	Now           time.Time
	// MustWin: as InteractionResolveParams.MustWin.
	MustWin bool
}

// RunLeaseParams takes or extends the lease of a running run: it wins when
// the run is running and unleased, leased to Owner, or its lease expired.
type RunLeaseParams struct {
	ID, Owner string
	Until     time.Time
	Now       time.Time
}

// RunListRecoverableParams lists running runs whose lease expired before Now.
type RunListRecoverableParams struct {
	Now   time.Time
	Limit int
}

// MessageInsertParams inserts a message. A tool message (ToolCallID set,
// Role "tool") fails with ErrDuplicate when that call already has a result.
type MessageInsertParams struct {
	ID, SessionID, RunID string
	Role, Content        string
	ToolCalls            json.RawMessage
	// Calls, when not nil, are ToolCalls decoded: the inserted Message's
	// Calls, so the store need not decode what the caller just encoded.
	// nil: the store decodes ToolCalls (DecodeCalls).
	Calls            []ToolCall
	ToolCallID, Name string
	IsError          bool
	Metadata         json.RawMessage
	ParentID         string
	CallIndex        int
	Now              time.Time
}

// DecodedCalls are the inserted message's Calls: p.Calls, else ToolCalls
// decoded (DecodeCalls).
func (p *MessageInsertParams) DecodedCalls() []ToolCall {
	if p.Calls != nil {
		return p.Calls
	}
	return DecodeCalls(p.ToolCalls)
}

// InteractionInsertParams inserts a pending interaction. It fails with
// ErrDuplicate when the tool call already has one. The interaction's
// deadlines are written with it (docs/design.md §16): its timeout (Seq 0,
// due at ExpiresAt, with TimeoutData) and Deadlines in order (Seq 1, 2, …).
type InteractionInsertParams struct {
	ID, SessionID, RunID, ToolCallID, Tool string
	Request                                json.RawMessage
	Now, ExpiresAt                         time.Time
	TimeoutData                            json.RawMessage
	Deadlines                              []DeadlineSpec
	// Route, when not nil, is stored as the interaction's Route.
	Route json.RawMessage
	// MustWin says the caller rolls the transaction back unless the
	// insert is new. Inside InTx a driver may then return the interaction
	// at once, without waiting for the write's answer, and fail the
	// transaction on a duplicate: nothing of it is committed and InTx
	// returns an error wrapping ErrDuplicate. Outside InTx, and in a
	// driver that answers at once, it changes nothing (InteractionInsert
	// returns ErrDuplicate and the transaction goes on).
	MustWin bool
}

// AssigneeAddParams makes Persons assignees of interaction RequestID, in
// order after those it has, each Via the given way; a person who is
// already an assignee keeps their row as it is.
type AssigneeAddParams struct {
	RequestID string
	Persons   []string
	Via       string
	Now       time.Time
}

// AssigneeDecideParams records Person's Decision ("approve" or "reject")
// on the pending interaction RequestID.
type AssigneeDecideParams struct {
	RequestID, Person, Decision string
	Now                         time.Time
}

// InteractionResolveParams resolves a pending interaction in one conditional
// write (docs/design.md §A.6.2 "一次性消费"): it wins only when the row is still
// pending, belongs to SessionID, and — unless Status is "expired" — has not
// passed its expiresAt at Now. For Status "expired" the row must have passed it.
type InteractionResolveParams struct {
	ID, SessionID string
	Status        string
	Answer        json.RawMessage
	// DecidedBy, when not nil, is stored as the interaction's DecidedBy.
	DecidedBy json.RawMessage
	Now       time.Time
	// ReceiptJWS is the signature of the receipt, stored with the answer
	// ("": unsigned).
	ReceiptJWS string
	// MustWin says the caller rolls the transaction back unless the
	// resolution wins (a lost one is of no use to it). Inside InTx a driver
	// may then report true at once, without waiting for the write's
	// answer, and fail the transaction when it loses: nothing of it is
	// committed and InTx returns an error wrapping ErrLost. Outside InTx,
	// and in a driver that answers at once, it changes nothing.
	MustWin bool
}

// InteractionSignParams stores the signature of the receipt of interaction
// ID, resolved by InteractionResolveRun (docs/design.md §17).
type InteractionSignParams struct {
	ID, ReceiptJWS string
}

// InteractionResolveRunParams resolves every pending interaction of RunID
// (in SessionID) as Status ("cancelled" or "expired") with Answer.
type InteractionResolveRunParams struct {
	SessionID, RunID string
	Status           string
	Answer           json.RawMessage
	Now              time.Time
}

// InteractionListExpiredParams lists pending interactions past expiresAt.
type InteractionListExpiredParams struct {
	Now   time.Time
	Limit int
}

// EventAppendParams appends an event with the session's next sequence number.
type EventAppendParams struct {
	SessionID, Name string
	Data            json.RawMessage
	// Ref, when not empty, is the id of an interaction of the session whose
	// stored Request is byte for byte Data: the event stores the reference
	// instead of a copy, and EventList returns the request's bytes as its
	// Data (the caller guarantees the equality; the interaction must be
	// written first, in the same transaction or before). The owner's feed
	// entry of the event (FeedEvents) references the interaction too.
	Ref string
	// MessageRef, when not empty, is the id of a message of the session
	// (written first, in the same transaction or before) whose content, or
	// the arguments of one of whose tool calls, the event carries: Data is
	// the event with "" as the value of its first "content" key (or, with
	// no such key, of its "arguments" key, the call being the one Data's
	// "toolCallId" names), and EventList returns Data with the message's
	// part in that place (SpliceMessage), so it is stored once, in the
	// message. The caller guarantees that the result is the event byte for
	// byte: no such key comes earlier in Data, and the message holds what
	// encoding/json wrote for it.
	MessageRef string
	// RunID, when not empty, is the run the event names (the runId of its
	// payload: session, user_input_required, done, error); it is stored
	// beside Data and returned as Event.RunID.
	RunID string
	// Audience are principals besides the session's owner whose feeds get
	// the entry of a FeedEvents event too (an interaction's assignees,
	// docs/design.md §16); the owner and repeated names are skipped. Their
	// entries are not webhook outbox rows: a webhook gets the event once,
	// from the owner's entry.
	Audience []string
	Now      time.Time
}

// EventDeleteParams deletes the events of SessionID with FromSeq ≤ Seq ≤
// ToSeq whose name is one of Names (the streamed deltas of a message, once
// the message is committed). The caller keeps the session's last event:
// deleting it could let the next event take its number again.
type EventDeleteParams struct {
	SessionID      string
	FromSeq, ToSeq int64
	Names          []string
}

// EventListParams lists events with Seq > AfterSeq, ascending.
type EventListParams struct {
	SessionID string
	AfterSeq  int64
	Limit     int // 0 means 1000
}

// AuditInsertParams records one audit entry.
type AuditInsertParams struct {
	SessionID, RequestID, ToolCallID, RunID string
	Action, Reason                          string
	Summary                                 json.RawMessage
	Now                                     time.Time
}

// TraceInsertParams records one trace entry.
type TraceInsertParams struct {
	SessionID, RunID, Kind string
	Data                   json.RawMessage
	Now                    time.Time
}
