package api

// ErrorCode names an error response (DESIGN §3 and docs/design.md §9). Codes
// are a contract: never rename them.
type ErrorCode string

// Error codes with their HTTP statuses.
const (
	CodeInvalidRequest      ErrorCode = "invalid_request"       // 400 malformed body or parameter
	CodeUnauthorized        ErrorCode = "unauthorized"          // 401 no or wrong bearer token
	CodeForbiddenOrigin     ErrorCode = "forbidden_origin"      // 403 cookie call from another origin
	CodeInteractionNotFound ErrorCode = "interaction_not_found" // 404 request unknown or another session's
	CodeSessionNotFound     ErrorCode = "session_not_found"     // 404 session unknown or another principal's
	CodeNotFound            ErrorCode = "not_found"             // 404 no such endpoint
	CodeMethodNotAllowed    ErrorCode = "method_not_allowed"    // 405 the path exists for other methods (+ Allow header)
	CodeAlreadyResolved     ErrorCode = "already_resolved"      // 409 answered or cancelled before (+ receipt)
	CodeRunInProgress       ErrorCode = "run_in_progress"       // 409 the session's run is active
	CodeInteractionPending  ErrorCode = "interaction_pending"   // 409 a question waits (+ pending)
	CodeInteractionExpired  ErrorCode = "interaction_expired"   // 410 past expiresAt (+ receipt)
	CodeNotResumable        ErrorCode = "not_resumable"         // 410 state exists but cannot be resumed
	CodePayloadTooLarge     ErrorCode = "payload_too_large"     // 413 body or free text too large
	CodeRequestTimeout      ErrorCode = "request_timeout"       // 408 the body did not arrive in time
	CodeInvalidAnswer       ErrorCode = "invalid_answer"        // 422 the answer breaks the request (+ details)
	CodeInternal            ErrorCode = "internal_error"        // 500
)

// ErrorBody is the JSON of every error response: {"error": {...}}, sent
// before any stream starts (DESIGN §3).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names the error (Code, stable) and explains it (Message, for
// people), with what a client needs to recover: the Receipt of an already
// resolved or expired request, the Pending request that blocks a new
// message, or the field-level Details of a rejected answer.
type ErrorDetail struct {
	Code    ErrorCode     `json:"code"`
	Message string        `json:"message"`
	Details []FieldError  `json:"details,omitempty"`
	Receipt *Receipt      `json:"receipt,omitempty"`
	Pending *InputRequest `json:"pending,omitempty"`

	// DetailsTotal is how many problems were found when Details lists only
	// the first of them (server.MaxErrorDetails); omitted when Details is
	// complete.
	DetailsTotal int `json:"detailsTotal,omitempty"`
}
