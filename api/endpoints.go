package api

// Endpoint describes one route of /api for the OpenAPI document
// (GET /api/openapi.json). Path uses net/http.ServeMux pattern syntax
// ("/api/sessions/{id}"). Request is a zero value of the JSON body type, nil
// for none. Responses lists the success answers; Errors the codes the route
// can answer with, each sent as an ErrorBody with the status
// ErrorCode.HTTPStatus gives (401 unauthorized applies to every route and is
// listed once per route by the generator).
type Endpoint struct {
	Method, Path string
	// Summary is one line for people; Description may say more.
	Summary, Description string
	Params               []Param
	Request              any
	// RequestAlt, when not nil, is a second form of the request body:
	// the body is one of Request and RequestAlt (oneOf).
	RequestAlt any
	Responses  []Response
	Errors     []ErrorCode
	// SlackSigned marks a route Slack calls: it takes no bearer token (the
	// request is authenticated by Slack's X-Slack-Signature instead, 401
	// when it does not verify) and its body is Slack's form
	// (application/x-www-form-urlencoded, payload=<JSON>), not JSON.
	SlackSigned bool
}

// Param is a query or header parameter of an Endpoint (path parameters come
// from the pattern). In is "query" or "header"; every parameter is a string
// on the wire.
type Param struct {
	Name, In, Description string
	Required              bool
}

// Response is one success answer of an Endpoint: Status with a JSON Body (a
// zero value of its type), or, when Stream is true, an SSE stream of the
// events in Events (text/event-stream).
type Response struct {
	Status      int
	Description string
	Body        any
	Stream      bool
}

// Endpoints is every route of /api (docs/design.md §3 and §18), in the
// order of docs/design.md §3. A server test checks that the server's routes and this
// table are the same set, and that real answers validate against the
// OpenAPI document generated from it.
var Endpoints = []Endpoint{
	{
		Method: "POST", Path: "/api/chat", Summary: "Start a run",
		Description: "Starts a run with the message in the session, or in a new session when sessionId is empty. " +
			"The answer is the run's SSE stream: session, the user's message, then the run's events until it pauses (user_input_required) or ends (done).",
		Request:   ChatRequest{},
		Responses: []Response{{Status: 200, Description: "the run's events", Stream: true}},
		Errors:    []ErrorCode{CodeInvalidRequest, CodeSessionNotFound, CodeRunInProgress, CodeInteractionPending, CodePayloadTooLarge, CodeRequestTimeout, CodeForbiddenOrigin},
	},
	{
		Method: "POST", Path: "/api/chat/continue", Summary: "Answer a pending request once",
		Description: "Answers request requestId of the session once (docs/design.md §A.2); its answer becomes the ToolResult of the original tool call. " +
			"The answer is the continuation's SSE stream (user_input_resolved, then the run's events until it pauses or ends), " +
			"or with Accept: application/json a 202 with the receipt. A rejected answer (422) consumes nothing. " +
			"The batch form (ContinueBatchRequest: answers entries that carry requestId, no top-level requestId) answers several pending requests of the session at once, all or none " +
			"(docs/design.md §32): one invalid entry is 422 with details naming it (answers[1].selections), a request no longer pending 409, and nothing changes; " +
			"the 202 lists every receipt (receipts). The run continues when its last pending request is resolved; while others remain, the stream ends after the resolution's events.",
		Request:    ContinueRequest{},
		RequestAlt: ContinueBatchRequest{},
		Responses: []Response{
			{Status: 200, Description: "the continuation's events", Stream: true},
			{Status: 202, Description: "accepted (Accept: application/json): the receipt; the run continues without the caller", Body: ContinueAccepted{}},
		},
		Errors: []ErrorCode{CodeInvalidRequest, CodeNotAssignee, CodeInteractionNotFound, CodeAlreadyResolved, CodeAlreadyDecided, CodeInteractionExpired, CodeNotResumable, CodeInvalidAnswer, CodePayloadTooLarge, CodeRequestTimeout, CodeForbiddenOrigin},
	},
	{
		Method: "GET", Path: "/api/interactions/pending", Summary: "The pending requests and the last receipt",
		Description: "What a refreshed page needs to restore its cards: every pending request of the session in call order (requests), the first of them (pending), the last receipt.",
		Params:      []Param{{Name: "sessionId", In: "query", Required: true, Description: "the session"}},
		Responses:   []Response{{Status: 200, Body: PendingResponse{}}},
		Errors:      []ErrorCode{CodeInvalidRequest, CodeSessionNotFound},
	},
	{
		Method: "GET", Path: "/api/sessions/{id}/events", Summary: "Subscribe to a session's events",
		Description: "Replays the session's events after Last-Event-ID (or ?after=), then follows new ones with heartbeat comments until the client leaves.",
		Params: []Param{
			{Name: "Last-Event-ID", In: "header", Description: "resume after this event id (a non-negative integer)"},
			{Name: "after", In: "query", Description: "the same as Last-Event-ID, for clients that cannot set headers"},
		},
		Responses: []Response{{Status: 200, Description: "the session's events", Stream: true}},
		Errors:    []ErrorCode{CodeInvalidRequest, CodeSessionNotFound},
	},
	{
		Method: "GET", Path: "/api/sessions", Summary: "The caller's sessions, most recently updated first",
		Description: "Paged: pass the answer's next as before= for the following page.",
		Params: []Param{
			{Name: "before", In: "query", Description: "the next of the previous page (a session id of the caller)"},
			{Name: "limit", In: "query", Description: "page size, 1-500, default 100"},
		},
		Responses: []Response{{Status: 200, Body: SessionList{}}},
		Errors:    []ErrorCode{CodeInvalidRequest},
	},
	{
		Method: "GET", Path: "/api/interactions", Summary: "The caller's inbox across all its sessions",
		Description: "status=pending: the open requests, oldest first (page on with after=next). " +
			"status=resolved: the resolved ones with their receipts, most recently resolved first (page on with before=next). " +
			"Each entry is the InputRequest plus status, receipt, sessionTitle and agent (docs/design.md §12).",
		Params: []Param{
			{Name: "status", In: "query", Description: "pending (default) or resolved"},
			{Name: "after", In: "query", Description: "status=pending: the next of the previous page"},
			{Name: "before", In: "query", Description: "status=resolved: the next of the previous page"},
			{Name: "limit", In: "query", Description: "page size, 1-500, default 100"},
		},
		Responses: []Response{{Status: 200, Body: InteractionList{}}},
		Errors:    []ErrorCode{CodeInvalidRequest},
	},
	{
		Method: "GET", Path: "/api/interactions/{id}", Summary: "One question by request id",
		Description: "The request as asked, its status and its receipt once resolved (null while pending), for a page that shows just that question " +
			"(/q/{requestId}, where an MCP host's URL-mode request points, docs/design.md §11). Another principal's question is 404 like an unknown one.",
		Responses: []Response{{Status: 200, Body: InteractionView{}}},
		Errors:    []ErrorCode{CodeInteractionNotFound},
	},
	{
		Method: "POST", Path: "/api/interactions/{id}/delegate", Summary: "Hand a pending question to another person",
		Description: "An assignee hands the question to another person of people: (docs/design.md §16): the person becomes an assignee and is told " +
			"(user_input_reminder, reason delegation, with the message), the caller may no longer answer, and the audit trail records it. " +
			"To oneself, to someone not in people: or to an assignee is 422 invalid_delegation; a caller who is not an assignee is 403 not_assignee.",
		Request:   DelegateRequest{},
		Responses: []Response{{Status: 200, Body: DelegateResult{}}},
		Errors:    []ErrorCode{CodeInvalidRequest, CodeNotAssignee, CodeInteractionNotFound, CodeAlreadyResolved, CodeInteractionExpired, CodeInvalidDelegation, CodePayloadTooLarge, CodeRequestTimeout, CodeForbiddenOrigin},
	},
	{
		Method: "GET", Path: "/api/events", Summary: "The caller's own event stream across its sessions",
		Description: "SSE: the user_input_required, user_input_resolved and done events of every session the caller owns, " +
			"each with the session event's payload plus sessionId, and an id of the caller's own feed (resume with Last-Event-ID or after=). " +
			"Without either, only events from now on are sent.",
		Params: []Param{
			{Name: "Last-Event-ID", In: "header", Description: "resume after this event id (a non-negative integer)"},
			{Name: "after", In: "query", Description: "the same as Last-Event-ID, for clients that cannot set headers"},
		},
		Responses: []Response{{Status: 200, Description: "the caller's lifecycle events", Stream: true}},
		Errors:    []ErrorCode{CodeInvalidRequest},
	},
	{
		Method: "GET", Path: "/api/sessions/{id}", Summary: "A session's transcript",
		Description: "Messages, tool calls, results, interactions and receipts.",
		Responses:   []Response{{Status: 200, Body: Transcript{}}},
		Errors:      []ErrorCode{CodeSessionNotFound},
	},
	{
		Method: "POST", Path: "/api/sessions/{id}/cancel", Summary: "Stop the session's active run",
		Description: "A pending request is resolved as cancelled and the run stops with no further model turn.",
		Responses:   []Response{{Status: 200, Body: CancelResponse{}}},
		Errors:      []ErrorCode{CodeSessionNotFound, CodeForbiddenOrigin},
	},
	{
		Method: "PATCH", Path: "/api/sessions/{id}", Summary: "Rename a session",
		Description: "The owner sets the session's title; its updatedAt (the list's order) does not change.",
		Request:     RenameRequest{},
		Responses:   []Response{{Status: 200, Body: SessionView{}}},
		Errors:      []ErrorCode{CodeInvalidRequest, CodeSessionNotFound, CodePayloadTooLarge, CodeRequestTimeout, CodeForbiddenOrigin},
	},
	{
		Method: "DELETE", Path: "/api/sessions/{id}", Summary: "Delete a session",
		Description: "The owner deletes the session with its runs, messages, interactions, events and trace; audit entries are kept. " +
			"While a run is active the answer is 409 run_in_progress, unless ?force=true, which cancels the run first.",
		Params:    []Param{{Name: "force", In: "query", Description: "true: cancel an active run, then delete"}},
		Responses: []Response{{Status: 200, Body: DeleteResponse{}}},
		Errors:    []ErrorCode{CodeInvalidRequest, CodeSessionNotFound, CodeRunInProgress, CodeForbiddenOrigin},
	},
	{
		Method: "GET", Path: "/api/sessions/{id}/trace", Summary: "What happened in a session",
		Description: "Model requests (tool names, message count), tool calls, ToolResults, the interaction lifecycle and the audit entries.",
		Responses:   []Response{{Status: 200, Body: TraceView{}}},
		Errors:      []ErrorCode{CodeSessionNotFound},
	},
	{
		Method: "GET", Path: "/api/info", Summary: "The model's name and the ask tools offered",
		Responses: []Response{{Status: 200, Body: Info{}}},
	},
	{
		Method: "GET", Path: "/api/agents", Summary: "The configured agents",
		Description: "Every agent of the configuration (docs/design.md §9), the default first: name, model, tools offered, ask tools.",
		Responses:   []Response{{Status: 200, Body: AgentList{}}},
	},
	{
		Method: "GET", Path: "/api/mcp/authorizations", Summary: "MCP servers waiting for a person to authorize luban",
		Description: "The MCP servers of mcp.servers with oauth that wait for an OAuth authorization the caller may give (docs/design.md §11, \"OAuth\"; the server's oauth.authorizers, anyone when empty). connectUrl is GET /oauth/start/{server}: it sends the browser to the authorization server; its callback GET /oauth/callback asks the same person to confirm, and the server's tools appear without a restart.",
		Responses:   []Response{{Status: 200, Body: MCPAuthorizationList{}}},
	},
	{
		Method: "POST", Path: SlackInteractionsPath, Summary: "Slack's button clicks (a Slack app's Interactivity Request URL)",
		Description: "Slack sends the clicks on the buttons of luban's Slack messages here (docs/design.md §17, docs/notifications.md), " +
			"signed with the app's signing secret (X-Slack-Signature v0 over X-Slack-Request-Timestamp and the body, 5-minute window): " +
			"no bearer token. The Slack user must be a person of people: (their slack id), else 403. " +
			"A click answers the question as that person; a click on a question resolved before answers 409 (410 expired) " +
			"and the message is updated to the receipt. Clicks that answer nothing (the \"Answer in luban\" link) are 200.",
		SlackSigned: true,
		Responses:   []Response{{Status: 200, Description: "the click answered the question, or asked for nothing"}},
		Errors:      []ErrorCode{CodeInvalidRequest, CodeUnknownSlackUser, CodeNotFound, CodeInteractionNotFound, CodeAlreadyResolved, CodeInteractionExpired, CodeNotResumable, CodeInvalidAnswer, CodePayloadTooLarge, CodeRequestTimeout},
	},
	{
		Method: "GET", Path: "/api/openapi.json", Summary: "This document",
		Description: "The OpenAPI 3.1 document of /api, generated from package api.",
		Responses:   []Response{{Status: 200, Description: "an OpenAPI 3.1 document", Body: map[string]any{}}},
	},
}

// HTTPStatus is the status an error response with code c carries (docs/design.md
// §3's table); 500 for a code it does not know.
func (c ErrorCode) HTTPStatus() int {
	switch c {
	case CodeInvalidRequest:
		return 400
	case CodeUnauthorized:
		return 401
	case CodeForbiddenOrigin, CodeUnknownSlackUser, CodeNotAssignee:
		return 403
	case CodeInteractionNotFound, CodeSessionNotFound, CodeNotFound:
		return 404
	case CodeMethodNotAllowed:
		return 405
	case CodeAlreadyResolved, CodeAlreadyDecided, CodeRunInProgress, CodeInteractionPending:
		return 409
	case CodeInteractionExpired, CodeNotResumable:
		return 410
	case CodeRequestTimeout:
		return 408
	case CodePayloadTooLarge:
		return 413
	case CodeInvalidAnswer, CodeInvalidDelegation:
		return 422
	}
	return 500
}
