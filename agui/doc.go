// Package agui speaks AG-UI 1.0 (https://docs.ag-ui.com, the protocol of
// @ag-ui/core 1.0.0) over luban's durable runs (docs/design.md §13): Handler serves
// POST /api/agui, which takes a RunAgentInput and answers Server-Sent Events
// of the form "data: <event JSON>\n\n".
//
// Mapping (docs/design.md §13):
//   - threadId is the luban session id. An unknown id of 1–128 characters of
//     [A-Za-z0-9_-] creates a session with that id for the caller; another
//     principal's session is RUN_ERROR session_not_found.
//   - Without resume, the input's last message, when it is a user message,
//     starts a run; the earlier messages (AG-UI clients send the whole
//     conversation every time) are not added again, since luban keeps its own
//     history. An input whose last message is not a user message starts
//     nothing: it reports the thread as it stands (its open interrupt, the
//     live run, or the outcome of its last run).
//   - A run's events become RUN_STARTED, TEXT_MESSAGE_START/CONTENT/END,
//     REASONING_START/MESSAGE_START/MESSAGE_CONTENT/MESSAGE_END/END (a
//     reasoning model's thinking), TOOL_CALL_START/ARGS/END,
//     TOOL_CALL_RESULT, CUSTOM "luban.user_input_resolved" (the receipt of
//     an answered question), and end in RUN_FINISHED
//     (outcome success, cancelled or interrupt) or RUN_ERROR {message, code}
//     with the codes of docs/design.md §3.
//   - A pending question is an interrupt: id = requestId, reason
//     input_required (ask tools) or confirmation (approvals), message = the
//     title, toolCallId, responseSchema (a JSON Schema of the answer, built
//     from the question's mode), expiresAt and metadata.inputRequest.
//   - RunAgentInput.tools are front-end tools, offered to the model for the
//     run; the model's call to one is an interaction announced as
//     TOOL_CALL_START/ARGS/END and RUN_FINISHED success (pendingToolCallIds
//     for 1.0 clients), answered by the tool message that ends the next
//     input, or by a resume (docs/design.md §21 "Front-end tools").
//   - A client before 1.0 (no protocolVersion) is sent only what
//     @ag-ui/core 0.0.x accepts: a cancelled run ends in RUN_FINISHED
//     without an outcome (docs/design.md §21 "Clients before 1.0").
//   - A resume entry {interruptId, status, payload} answers it through the
//     same Runner call as POST /api/chat/continue: payload is that body's
//     answer part. It is consumed exactly once; a replayed resume produces no
//     second ToolResult and its stream ends with the run's own outcome.
//   - A run whose model asked several questions in one message pauses once
//     for all of them (docs/design.md §32): its RUN_FINISHED carries every
//     one in interrupts[], in call order. A resume[] of several entries
//     answers them together, all or none, as the batch form of POST
//     /api/chat/continue: one refused entry is a RUN_ERROR whose details
//     name it (resume[1].decision) and every interrupt stays open. One entry
//     answers one; while others stay open, its stream ends in RUN_FINISHED
//     with the interrupts still open.
//
// A malformed body (not JSON, no threadId, runId or messages, a bad threadId,
// a resume entry without interruptId or status) is answered 400 invalid_request as JSON before
// any stream, like every /api call (docs/design.md §3); everything the run decides is
// a RUN_ERROR inside a 200 stream, as AG-UI clients expect.
package agui
