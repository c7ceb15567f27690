package api

// ErrorCode names an error response (docs/design.md §3 and §18). Codes
// are a contract: never rename them.
type ErrorCode string

// Error codes with their HTTP statuses.
const (
	CodeInvalidRequest      ErrorCode = "invalid_request"       // 400 malformed body or parameter
	CodeUnauthorized        ErrorCode = "unauthorized"          // 401 no or wrong bearer token
	CodeForbiddenOrigin     ErrorCode = "forbidden_origin"      // 403 cookie call from another origin
	CodeUnknownSlackUser    ErrorCode = "unknown_slack_user"    // 403 a Slack click from no person of people:
	CodeNotAssignee         ErrorCode = "not_assignee"          // 403 the caller is not one of the request's assignees (docs/design.md §16)
	CodeAlreadyDecided      ErrorCode = "already_decided"       // 409 the caller already decided this quorum approval
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
	CodeInvalidDelegation   ErrorCode = "invalid_delegation"    // 422 a delegate to oneself, a stranger or an assignee (+ details)
	CodeInternal            ErrorCode = "internal_error"        // 500
)

// FieldCode names one problem in the details of an error (FieldError.Code):
// stable, snake_case, listed here and in docs/design.md §25 (never renamed,
// only added to). Clients word a detail from its code, its field path and its
// params, and fall back to FieldError.Message for a code they do not know.
// Param keys: min, max, got, exclusiveMin, exclusiveMax, multipleOf and
// offset (a byte offset into invalid JSON) are numbers; unit says what min,
// max and got count ("characters", "bytes", "items", "properties"; absent
// for a count of options or a numeric bound); option, question, of, pattern,
// format, expected, got (of invalid_type) and path are strings; allowed is
// an array of the accepted values. Strings quoted from the answer are
// clipped.
type FieldCode string

// Field error codes, with the params each one carries.
const (
	DetailRequired         FieldCode = "required"                  // a value is needed and absent or blank; {question} for a missing AskUser answer
	DetailUnknownField     FieldCode = "unknown_field"             // the body or the schema has no such field
	DetailInvalidType      FieldCode = "invalid_type"              // wrong JSON type: {expected: "object"|"array"|"string"|"number"|"integer"|"boolean", got?}
	DetailInvalidJSON      FieldCode = "invalid_json"              // not parseable JSON, or data after the value
	DetailTooFew           FieldCode = "too_few"                   // fewer items than allowed: {min, got?}
	DetailTooMany          FieldCode = "too_many"                  // more items than allowed: {max, got}
	DetailUnknownOption    FieldCode = "unknown_option"            // an option id or label the question does not offer: {option}
	DetailUnknownQuestion  FieldCode = "unknown_question"          // an AskUser answer to a question that was not asked: {question}
	DetailDuplicate        FieldCode = "duplicate"                 // the same option or question twice: {of} (the field it repeats) or {question}
	DetailTooLong          FieldCode = "too_long"                  // longer than allowed: {max, got?, unit}
	DetailTooShort         FieldCode = "too_short"                 // shorter than allowed: {min, got?, unit}
	DetailOutOfRange       FieldCode = "out_of_range"              // a number beyond a bound: {min} and/or {max} (exclusive: {exclusiveMin}/{exclusiveMax}); none when beyond what a number can hold
	DetailNotMultiple      FieldCode = "not_multiple"              // a number that is not a multiple of {multipleOf}
	DetailPattern          FieldCode = "pattern"                   // text that does not match {pattern}
	DetailFormat           FieldCode = "format"                    // text that is not a valid {format}: "number", "date", "email", "uri", "date-time", ...
	DetailEnum             FieldCode = "enum"                      // a value that is not one of {allowed}
	DetailNotAllowed       FieldCode = "not_allowed"               // a field this request or decision does not take (customInput without allowCustom, arguments with approve, ...)
	DetailConflictWithKind FieldCode = "conflict_with_answer_kind" // a field of another kind of request (approval fields on a question, question fields on an approval, selections on AskUser)
	DetailNoQuestion       FieldCode = "no_question"               // there is no question to answer
	DetailOutsideWorkspace FieldCode = "outside_workspace"         // a path that is absolute or leads outside the workspace: {path}
	DetailNoWorkspace      FieldCode = "no_workspace"              // a path answer while the server has no usable workspace (--workspace)
	DetailNotDirectory     FieldCode = "not_directory"             // a path that is, or goes through, a file: {path}
	DetailIsDirectory      FieldCode = "is_directory"              // a file path that names a directory: {path}
	DetailInvalidPath      FieldCode = "invalid_path"              // a path that cannot be used (NUL bytes, blank names, symbolic-link loops, unreadable): {path}
	DetailInvalid          FieldCode = "invalid"                   // any other rule (a schema keyword without a code of its own); only Message says more
)

// ErrorBody is the JSON of every error response: {"error": {...}}, sent
// before any stream starts (docs/design.md §3).
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
