package agent

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// Defaults of Options and Agent fields.
const (
	DefaultInteractionTTL  = 24 * time.Hour
	DefaultLeaseDuration   = 15 * time.Second
	DefaultSweepInterval   = time.Second
	DefaultEventPoll       = 15 * time.Second
	DefaultMaxSteps        = 25
	MaxInvalidAskRetries   = 3 // model turns in a row with invalid ask arguments before the run fails
	MaxMessageRunes        = 32000
	defaultAgentName       = "default"
	defaultSystemPrompt    = "You are luban, a helpful assistant. When information needed to continue is missing, ask the user with the ask_user or AskUser tool instead of guessing, then continue with their answer."
	interruptedToolMessage = "interrupted: the server stopped while this tool was running; it was not run again because it is not idempotent"
)

// Agent is a named configuration: a model, a system prompt and the tools it
// may see (its allowlist).
type Agent struct {
	// Name identifies the agent in stored runs; a run whose agent no longer
	// exists is not resumable. Default "default".
	Name     string
	System   string // default: a short luban prompt
	Provider model.Provider
	// Tools is the allowlist, in the order offered to the model.
	Tools tool.Allowlist
	// MaxSteps bounds model calls per run. Default 25.
	MaxSteps int
	// Approval decides which tool calls wait for a person's approval before
	// they run (docs/design.md §10). The zero value asks for write_file only
	// (approval.DefaultRules); ask tools never need approval.
	Approval approval.Policy
	// Routes say who answers the agent's questions (docs/design.md §16):
	// the first that matches a question assigns it. None: the session's
	// owner answers every question.
	Routes []Route
}

// Options configures a Runner. Store, Tools and at least one Agent are required.
type Options struct {
	Store store.Store
	Tools *tool.Registry
	// Agents; the first is used for new runs.
	Agents []*Agent
	// InteractionTTL is how long a question waits for an answer. Default 24h.
	InteractionTTL time.Duration
	// Workspace is the root directory answers in mode "directory" stay inside.
	Workspace string
	// LeaseDuration is how long a run stays owned by this process without a
	// heartbeat. Default 15s.
	LeaseDuration time.Duration
	// SweepInterval is how often orphaned runs are looked for. Default 1s.
	SweepInterval time.Duration
	// DeadlinePoll bounds how long the deadline scheduler sleeps when
	// nothing wakes it: it wakes when the earliest deadline is due and
	// when a question is asked (here, or on another replica of a PostgreSQL
	// store), and DeadlinePoll catches what neither covers (a question
	// asked by another process on the same SQLite file). Default 1m.
	DeadlinePoll time.Duration
	// EventPoll is how often Events reads the log again without a wake-up.
	// A commit of another process on the same SQLite file wakes no
	// subscriber here (PostgreSQL's NOTIFY does), so its events reach an
	// open stream within EventPoll (docs/durability.md). luban serve sets it
	// to --sse-heartbeat. Default 15s.
	EventPoll time.Duration
	// ToolStopWait bounds how long Cancel waits for a tool call that a run
	// driven by this process is making, so that the call gets its real
	// result; a call still running then gets a result saying it was
	// interrupted and may have taken effect (docs/design.md §18). Default 5s.
	ToolStopWait time.Duration
	// Signer signs every resolution's receipt (docs/design.md §17): the
	// JWS goes into Receipt.Signature, the stored row, the
	// user_input_resolved event (so webhooks), the audit entry, and the
	// context of a tool run after its approval (tool.ApprovalReceipt).
	// Nil: receipts are unsigned.
	Signer ReceiptSigner
	// People is the directory of people (docs/design.md §16): routes'
	// groups are expanded from it and receipts name people by it. Nil: no
	// people (a principal's name is its id).
	People *principal.Directory
	// InstanceID names this process in leases. Default random.
	InstanceID string
	Logger     *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Step, when set, wraps every step of a run (one transition: a model
	// turn, a tool's result, a question put): it gets the step's context and
	// the run id and returns the context the step runs with and a func
	// called with the step's outcome (telemetry.StepSpan makes each step an
	// OpenTelemetry span). Nil: steps run as they are.
	Step func(ctx context.Context, runID string) (context.Context, func(paused bool, err error))

	// fault is the fault injection hook of builds with the lubantest tag
	// (InjectFault); it is never set otherwise.
	fault func(point string)
}

// Runner drives runs. It is safe for concurrent use.
type Runner struct {
	opts  Options
	st    store.Store
	tools *tool.Registry
	// decideTools is what decide asks of the registry (registered, spec,
	// check), bound once: a method value made in every step is an
	// allocation each.
	decideTools decideInput
	agents      map[string]*Agent
	first       *Agent
	log         *slog.Logger

	baseCtx context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup // the driver goroutines (drive.go)
	// drivers hands a run to a driver goroutine waiting for one (unbuffered:
	// a send succeeds only when one waits); idleDrivers counts those waiting.
	drivers     chan driveJob
	idleDrivers atomic.Int32
	mu          sync.Mutex
	active      map[string]context.CancelFunc
	// again marks runs asked to be driven while their driver here was
	// finishing (an answer that arrives right after the pause committed);
	// the driver then drives them once more instead of leaving them to the
	// sweeper and a lease expiry. The value is the state that next drive
	// starts from: what the transition that asked committed (an answer's
	// resumed run and messages), nil when it must read the run (asked by
	// more than one, or by a caller that committed nothing).
	again map[string]*state
	// elicits holds, by request id, the channel on which a tool call in
	// flight here waits for the answer to its server's in-session
	// elicitation (elicit.go).
	elicits map[string]chan elicit.Answer
	// live holds, by run id, the model call each run driven here is
	// making (deltas.go).
	live map[string]*liveTurn
	// toolRuns holds, by run id, the tool call each run driven here is
	// making (toolstop.go).
	toolRuns map[string]*toolRun
}

// New validates opts and returns a Runner. Call Run to start the sweeper
// and the recovery of orphaned runs.
func New(opts Options) (*Runner, error) {
	if opts.Store == nil || opts.Tools == nil || len(opts.Agents) == 0 {
		return nil, errors.New("agent: Options needs Store, Tools and at least one Agent")
	}
	if opts.InteractionTTL <= 0 {
		opts.InteractionTTL = DefaultInteractionTTL
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = DefaultSweepInterval
	}
	if opts.EventPoll <= 0 {
		opts.EventPoll = DefaultEventPoll
	}
	if opts.DeadlinePoll <= 0 {
		opts.DeadlinePoll = DefaultDeadlinePoll
	}
	if opts.ToolStopWait <= 0 {
		opts.ToolStopWait = DefaultToolStopWait
	}
	if opts.InstanceID == "" {
		opts.InstanceID = NewID("inst")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Runner{opts: opts, st: opts.Store, tools: opts.Tools, agents: map[string]*Agent{}, log: opts.Logger, active: map[string]context.CancelFunc{}, elicits: map[string]chan elicit.Answer{}, live: map[string]*liveTurn{}, toolRuns: map[string]*toolRun{}, drivers: make(chan driveJob)}
	r.decideTools = decideInput{registered: r.registered, spec: r.spec, check: r.tools.CheckArgs}
	for _, a := range opts.Agents {
		if a.Name == "" {
			a.Name = defaultAgentName
		}
		if a.System == "" {
			a.System = defaultSystemPrompt
		}
		if a.MaxSteps <= 0 {
			a.MaxSteps = DefaultMaxSteps
		}
		if a.Provider == nil {
			return nil, fmt.Errorf("agent %q: no Provider", a.Name)
		}
		if _, err := r.tools.Specs(a.Tools); err != nil {
			return nil, fmt.Errorf("agent %q: %w", a.Name, err)
		}
		if _, dup := r.agents[a.Name]; dup {
			return nil, fmt.Errorf("agent %q defined twice", a.Name)
		}
		r.agents[a.Name] = a
	}
	// Other processes tell from this lock that a question this process
	// holds (an in-session elicitation) can still be answered
	// (Runner.elicitLive).
	hctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := r.st.HoldInstance(hctx, opts.InstanceID)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("agent: hold instance %s: %w", opts.InstanceID, err)
	}
	r.first = opts.Agents[0]
	r.baseCtx, r.stop = context.WithCancel(context.Background())
	return r, nil
}

// DefaultAgent is the agent new runs use.
func (r *Runner) DefaultAgent() *Agent { return r.first }

func (r *Runner) now() time.Time { return r.opts.Now().UTC().Truncate(time.Microsecond) }

// Now is the runner's clock (Options.Now, in UTC, truncated to the
// microseconds the stores keep, so a time in a first answer, a receipt's
// resolvedAt say, equals the stored one replayed later): the time expiresAt is
// checked against, for callers that sign state expiring with a question.
func (r *Runner) Now() time.Time { return r.now() }

// Serve fires the questions' deadlines when they come due (reminders,
// escalations, timeouts: docs/design.md §16) and recovers orphaned runs
// (status running with an expired lease, e.g. after a crash) every
// SweepInterval until ctx is done. It then stops driving runs: each keeps
// its last checkpoint and its lease is released so the next process
// continues it at once.
func (r *Runner) Serve(ctx context.Context) error {
	dctx, stopDeadlines := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.runDeadlines(dctx)
	}()
	defer func() {
		stopDeadlines()
		<-done
	}()
	t := time.NewTicker(r.opts.SweepInterval)
	defer t.Stop()
	for {
		r.sweep(ctx)
		select {
		case <-ctx.Done():
			stopDeadlines()
			<-done
			r.Shutdown()
			return nil
		case <-t.C:
		}
	}
}

// Shutdown stops every run this process drives at its next step boundary
// (an in-flight model call is abandoned and made again by the next process),
// releases their leases and waits for the drivers to return.
func (r *Runner) Shutdown() {
	r.stop()
	r.wg.Wait()
}

func (r *Runner) sweep(ctx context.Context) {
	now := r.now()
	runs, err := r.st.RunListRecoverable(ctx, &store.RunListRecoverableParams{Now: now, Limit: 100})
	if err != nil && ctx.Err() == nil {
		r.log.Error("sweep: list recoverable", "err", err)
	}
	for _, run := range runs {
		r.driveRun(run.ID)
	}
}

// NewID returns prefix_ followed by 26 characters of crypto-random base32
// (128 bits): unguessable identifiers for sessions, runs and requests.
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	var out [26]byte
	idEncoding.Encode(out[:], b[:])
	return prefix + "_" + string(out[:])
}

// idEncoding is base32 (RFC 4648) in lower case without padding: NewID's
// 16 random bytes are 26 characters.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
