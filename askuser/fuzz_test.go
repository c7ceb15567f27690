package askuser_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

// FuzzParseArgs checks, for any tool name and arguments text, that ParseArgs
// never panics, fails only with a non-empty *ArgsError, and that an accepted
// Prompt is within every bound and parses again to itself when re-sent, and
// that ParseArgs gives what its JSON Schema path gives (ParseArgsSchema).
// Seed corpus: testdata/fuzz/FuzzParseArgs.
func FuzzParseArgs(f *testing.F) {
	f.Add(api.ToolAskUser, `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`)
	f.Add(api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":""},{"label":"b","description":""}]}]}`)
	for _, raw := range fastBases {
		f.Add(api.ToolAskUser, raw)
	}
	f.Fuzz(func(t *testing.T, tool, raw string) {
		if tool == api.ToolAskUser {
			requireSameAsSchema(t, raw)
		}
		p, err := askuser.ParseArgs(tool, raw)
		if err != nil {
			require.Nil(t, p)
			var ae *askuser.ArgsError
			require.True(t, errors.As(err, &ae))
			require.NotEmpty(t, ae.Rule)
			return
		}
		require.Equal(t, tool, p.Tool)
		var resend []byte
		if tool == api.ToolAskUser {
			requireAskUserBounds(t, p)
			args := map[string]any{
				"title": p.Title, "description": p.Description, "mode": p.Mode,
				"allowCustom": p.AllowCustom, "submitLabel": p.SubmitLabel,
			}
			if p.Options != nil {
				args["options"] = p.Options
			}
			if p.Minimum != nil {
				args["minimum"] = *p.Minimum
			}
			if p.Maximum != nil {
				args["maximum"] = *p.Maximum
			}
			if p.Integer {
				args["integer"] = true
			}
			resend, err = json.Marshal(args)
		} else {
			requireBatchBounds(t, p)
			resend, err = json.Marshal(map[string]any{"questions": p.Questions})
		}
		require.NoError(t, err)
		again, err := askuser.ParseArgs(tool, string(resend))
		require.NoError(t, err, "%s", resend)
		require.Equal(t, p, again)
	})
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func requireAskUserBounds(t *testing.T, p *api.Prompt) {
	require.LessOrEqual(t, runes(p.Title), askuser.MaxTitleLen)
	require.LessOrEqual(t, runes(p.Description), askuser.MaxDescriptionLen)
	require.LessOrEqual(t, runes(p.SubmitLabel), askuser.MaxSubmitLabelLen)
	require.LessOrEqual(t, len(p.Options), askuser.MaxOptions)
	switch p.Mode {
	case api.ModeSingle, api.ModeMultiple:
		require.GreaterOrEqual(t, len(p.Options), askuser.MinChoiceOptions)
	case api.ModeToggle:
		require.GreaterOrEqual(t, len(p.Options), askuser.MinToggleOptions)
	case api.ModeText, api.ModeNumber, api.ModeDate, api.ModeDirectory:
		require.Empty(t, p.Options)
	default:
		t.Fatalf("mode %q accepted", p.Mode)
	}
	ids := map[string]bool{}
	for _, o := range p.Options {
		require.False(t, ids[o.ID], "duplicate id %q", o.ID)
		ids[o.ID] = true
		require.LessOrEqual(t, runes(o.ID), askuser.MaxOptionIDLen)
		require.LessOrEqual(t, runes(o.Label), askuser.MaxLabelLen)
		require.LessOrEqual(t, runes(o.Description), askuser.MaxOptionDescriptionLen)
	}
}

func requireBatchBounds(t *testing.T, p *api.Prompt) {
	require.Equal(t, api.ModeQuestions, p.Mode)
	require.GreaterOrEqual(t, len(p.Questions), askuser.MinQuestions)
	require.LessOrEqual(t, len(p.Questions), askuser.MaxQuestions)
	require.Equal(t, p.Questions[0].Question, p.Title)
	for _, q := range p.Questions {
		require.LessOrEqual(t, runes(q.Header), askuser.MaxHeaderLen)
		require.GreaterOrEqual(t, len(q.Options), askuser.MinQuestionOptions)
		require.LessOrEqual(t, len(q.Options), askuser.MaxQuestionOptions)
		for _, o := range q.Options {
			if q.MultiSelect {
				require.Empty(t, o.Preview)
			}
		}
	}
}

// fuzzPrompts are the prompts FuzzValidateAnswer answers, one per mode.
var fuzzPrompts = []struct{ tool, raw string }{
	{api.ToolAskUser, `{"title":"t","mode":"single","allowCustom":true,"options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`},
	{api.ToolAskUser, `{"title":"t","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`},
	{api.ToolAskUser, `{"title":"t","mode":"multiple","options":[{"id":"a","label":"A"},{"id":"b","label":"B"},{"id":"c","label":"C"}]}`},
	{api.ToolAskUser, `{"title":"t","mode":"toggle","allowCustom":true,"options":[{"id":"a","label":"A"}]}`},
	{api.ToolAskUser, `{"title":"t","mode":"text"}`},
	{api.ToolAskUser, `{"title":"t","mode":"number"}`},
	{api.ToolAskUser, `{"title":"t","mode":"date"}`},
	{api.ToolAskUser, `{"title":"t","mode":"directory"}`},
	{api.ToolAskUserBatch, `{"questions":[{"question":"q1","header":"h","options":[{"label":"a","description":""},{"label":"b","description":""}]},{"question":"q2","header":"h","multi_select":true,"options":[{"label":"a","description":""},{"label":"b","description":""}]}]}`},
}

// FuzzValidateAnswer checks, for any answer body to any mode, that
// ValidateAnswer never panics, fails only with field details, and that an
// accepted answer is normalized (non-nil selections), accepted again as is,
// and comes back verbatim in the ask_user ToolResult.
// Seed corpus: testdata/fuzz/FuzzValidateAnswer.
func FuzzValidateAnswer(f *testing.F) {
	ws := f.TempDir()
	require.NoError(f, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	require.NoError(f, os.Symlink("..", filepath.Join(ws, "up")))
	require.NoError(f, os.Symlink("../missing", filepath.Join(ws, "dangling")))
	prompts := make([]*api.Prompt, len(fuzzPrompts))
	for i, fp := range fuzzPrompts {
		p, err := askuser.ParseArgs(fp.tool, fp.raw)
		require.NoError(f, err)
		prompts[i] = p
	}
	f.Add(uint8(2), `["a","c"]`, "", false, "")
	f.Add(uint8(8), `[]`, "", false, `[{"question":"q2","selected":["b","a"],"other":""},{"question":"q1","selected":[],"other":"x"}]`)
	f.Fuzz(func(t *testing.T, which uint8, selections, customInput string, cancelled bool, answers string) {
		p := prompts[int(which)%len(prompts)]
		a := api.Answer{CustomInput: customInput, Cancelled: cancelled}
		if json.Unmarshal([]byte(selections), &a.Selections) != nil {
			a.Selections = nil
		}
		if json.Unmarshal([]byte(answers), &a.Answers) != nil {
			a.Answers = nil
		}
		opts := askuser.AnswerOptions{Workspace: ws}
		got, err := askuser.ValidateAnswer(p, a, opts)
		if err != nil {
			var ae *askuser.AnswerError
			require.True(t, errors.As(err, &ae))
			require.NotEmpty(t, ae.Details)
			for _, d := range ae.Details {
				require.NotEmpty(t, d.Field)
				require.NotEmpty(t, d.Message)
			}
			return
		}
		require.NotNil(t, got.Selections)
		require.LessOrEqual(t, runes(got.CustomInput), askuser.MaxCustomInput)
		again, err := askuser.ValidateAnswer(p, got, opts)
		require.NoError(t, err)
		require.Equal(t, got, again)
		if cancelled || p.Tool != api.ToolAskUser {
			return
		}
		var content struct {
			Selections  []string `json:"selections"`
			CustomInput string   `json:"customInput"`
		}
		require.NoError(t, json.Unmarshal([]byte(askuser.AnsweredResult(p, got).Content), &content))
		require.Equal(t, got.Selections, content.Selections)
		if utf8.ValidString(got.CustomInput) {
			require.Equal(t, got.CustomInput, content.CustomInput)
		}
	})
}
