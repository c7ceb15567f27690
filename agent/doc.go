// Package agent is luban's loop: a Runner drives runs of agents (a model, a
// system prompt, an allowlist of tools) and puts their questions (the
// ask_user and AskUser tools) in front of people, durably.
//
// A run is a state machine persisted at every step boundary (docs/design.md §4):
// running, waiting_input, then completed, cancelled, expired or failed. A
// paused run holds no goroutine, channel or future: it is rows in the store.
// Resuming means loading the rows, applying the answer and continuing; the
// same code serves "continue after three seconds" and "continue after a
// restart a week later".
//
// Contracts:
//   - Every edge of the machine is one transaction (docs/design.md §22): the
//     run's row is written first and conditionally, then its messages,
//     events, trace and audit entries together. A question is answered at
//     most once (Resolve); whatever ends a run (Cancel, an expiry, a
//     failure) resolves every question it left pending in the same
//     transaction.
//   - Events are committed before anyone sees them; Events replays a
//     session's log after a sequence number and then follows it live, so a
//     reader that reconnects misses and repeats nothing.
//   - Start, Resolve and Cancel return the errors of errors.go, which the
//     HTTP server maps to the codes of docs/design.md §3.
//   - The Runner is the whole way to the store for a program that serves
//     people (there is no accessor for the store): writes (Start, Resolve,
//     Cancel, Ask, DeleteSession), the streams (Events per session, Feed per
//     principal) and the reads (Session, Sessions, SessionPage, SessionState,
//     RunState, RequestRun, Transcript, Trace, Pending, Inbox), each
//     checking that the caller owns what it names.
//   - A Runner is safe for concurrent use, and several processes (replicas)
//     may drive runs of one PostgreSQL store: a run is driven by the process
//     that holds its lease, and another takes it over when the lease expires.
//
// Embedding: build a tool.Registry, a model.Provider (model.ProviderFunc
// adapts a function) and a store (store/sqlite or store/postgres), call New,
// run Runner.Serve in a goroutine for the sweeper, then Start a run, follow
// Events and Resolve its questions (see the example).
package agent
