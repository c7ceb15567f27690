package askuser_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	b := setup(t)
	secret := "我的密码是 hunter2 🔑"
	tests := []struct {
		name   string
		prompt string
		answer api.Answer
		want   askuser.AuditSummary
	}{
		{"choice and free text", "multiple+custom", api.Answer{Selections: []string{"a", "b"}, CustomInput: secret},
			askuser.AuditSummary{Mode: api.ModeMultiple, Selections: []string{"a", "b"}, SelectionCount: 2, CustomInputLen: 15, CustomInputSHA256: hash(secret)}},
		{"explicit empty", "multiple", api.Answer{Selections: []string{}},
			askuser.AuditSummary{Mode: api.ModeMultiple}},
		{"text", "text", api.Answer{CustomInput: secret},
			askuser.AuditSummary{Mode: api.ModeText, CustomInputLen: 15, CustomInputSHA256: hash(secret)}},
		{"cancelled", "text", api.Answer{CustomInput: secret, Cancelled: true},
			askuser.AuditSummary{Mode: api.ModeText, Cancelled: true}},
		{"batch", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"PostgreSQL"}},
			{Question: "Which features?", Selected: []string{"Auth", "Search"}, Other: secret},
		}}, askuser.AuditSummary{Mode: api.ModeQuestions, Selections: []string{"PostgreSQL", "Auth", "Search"}, SelectionCount: 3,
			CustomInputLen: 15, CustomInputSHA256: hash("\x00" + secret), AnswerCount: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := askuser.Summarize(b.prompts[tt.prompt], tt.answer)
			require.Equal(t, tt.want, got)

			// The free text never reaches the logged form.
			raw, err := json.Marshal(got)
			require.NoError(t, err)
			require.NotContains(t, string(raw), "hunter2")
		})
	}
}

func TestSummarizeJSON(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw, err := json.Marshal(askuser.Summarize(b.prompts["single"], api.Answer{Selections: []string{"safe"}, CustomInput: "x"}))
	require.NoError(t, err)
	require.JSONEq(t, `{"mode":"single","selections":["safe"],"selectionCount":1,"customInputLen":1,"customInputSha256":"`+hash("x")+`"}`, string(raw))
}
