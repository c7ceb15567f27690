// Package client is a typed Go client of luban's HTTP/SSE API (docs/design.md §3).
// `luban chat` and end-to-end tests use it.
//
// Every call takes a context first and authenticates with
// "Authorization: Bearer <token>". A call the server refuses returns a
// *Error carrying the status and the JSON error body's code, message and
// recovery fields (details of a 422, the receipt of a 409/410, the pending
// request of a 409 interaction_pending); use errors.As.
//
// The client covers every operation of the server's OpenAPI document (GET
// /api/openapi.json; a test holds the two together): Chat and Start (which
// picks the agent of a new session, see Agents), Continue and
// ContinueNoStream, Pending, Sessions and SessionPage, Session, Rename,
// Delete, Cancel, Trace, Events, Inbox, Interaction, PrincipalEvents, Info,
// Agents and OpenAPI.
//
// Chat, Start, Continue, Events and PrincipalEvents return a *Stream of typed
// events. A stream opened
// by Chat or Continue ends at the run's pause (user_input_required) or end
// (done); one opened by Events stays open until ctx ends. Reconnecting is
// the caller's choice: a Stream remembers the id of the last event it read
// (LastEventID), and Events(ctx, sessionID, thatID) replays exactly what came
// after it, so a client that lost its connection misses nothing and sees
// nothing twice. Resume opens a session a client did not follow from its
// start: its transcript and a stream that begins with the text a reply in
// progress streamed before the transcript was read and repeats nothing the
// transcript holds.
package client
