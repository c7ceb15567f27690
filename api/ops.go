package api

// DeleteResponse is DELETE /api/sessions/{id} (DESIGN §14): the session
// that is gone, with its runs, messages, interactions, events and trace
// (audit entries are kept and age out with --retain-audit).
type DeleteResponse struct {
	SessionID string `json:"sessionId"`
	Deleted   bool   `json:"deleted"`
}
