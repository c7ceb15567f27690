package api

// RenameRequest is the body of PATCH /api/sessions/{id}: the session's new
// title. Runs of whitespace become one space and the ends are trimmed; then
// it must hold 1 to 200 characters and no control character (400
// invalid_request otherwise).
type RenameRequest struct {
	Title string `json:"title"`
}

// DeleteResponse is DELETE /api/sessions/{id} (docs/design.md §14): the session
// that is gone, with its runs, messages, interactions, events and trace
// (audit entries are kept and age out with --retain-audit).
type DeleteResponse struct {
	SessionID string `json:"sessionId"`
	Deleted   bool   `json:"deleted"`
}
