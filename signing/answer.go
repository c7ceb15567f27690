package signing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/lubanhq/luban/api"
)

// AnswerSHA256 is the lowercase hex SHA-256 that api.ReceiptClaims.AnswerSHA256
// carries: of the JSON object {selections, customInput, answers, decision,
// arguments, message, remember, content} of rc, in that order, with
// selections null as [] and arguments and content re-encoded canonically
// (object keys sorted, no insignificant space, numbers as written), so the
// same answer read back from either store gives the same hash.
func AnswerSHA256(rc *api.Receipt) string {
	sel := rc.Selections
	if sel == nil {
		sel = []string{}
	}
	b, _ := json.Marshal(struct {
		Selections  []string             `json:"selections"`
		CustomInput string               `json:"customInput"`
		Answers     []api.QuestionAnswer `json:"answers"`
		Decision    api.Decision         `json:"decision"`
		Arguments   json.RawMessage      `json:"arguments"`
		Message     string               `json:"message"`
		Remember    string               `json:"remember"`
		Content     json.RawMessage      `json:"content"`
	}{sel, rc.CustomInput, rc.Answers, rc.Decision, canonical(rc.Arguments), rc.Message, rc.Remember, canonical(rc.Content)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical re-encodes a JSON value with sorted object keys and no
// insignificant space, keeping numbers as written; empty or invalid JSON
// is null.
func canonical(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("null")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
