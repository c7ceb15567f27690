package askuser_test

import (
	"errors"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

// A number question may ask for a whole number within bounds; an answer
// beyond them is refused with a code the card and the terminal can word.
func TestNumberBounds(t *testing.T) {
	t.Parallel()
	p, err := askuser.ParseArgs(api.ToolAskUser, `{"title":"How many replicas?","mode":"number","integer":true,"minimum":1,"maximum":100}`)
	require.NoError(t, err)
	require.True(t, p.Integer)
	require.Equal(t, 1.0, *p.Minimum)
	require.Equal(t, 100.0, *p.Maximum)

	for _, tc := range []struct {
		in     string
		code   api.FieldCode
		params map[string]any
	}{
		{"-2.5", api.DetailInvalidType, map[string]any{"expected": "integer", "got": "number"}},
		{"2.5", api.DetailInvalidType, map[string]any{"expected": "integer", "got": "number"}},
		{"0", api.DetailOutOfRange, map[string]any{"min": 1.0}},
		{"-3", api.DetailOutOfRange, map[string]any{"min": 1.0}},
		{"101", api.DetailOutOfRange, map[string]any{"max": 100.0}},
		{"1e3", api.DetailOutOfRange, map[string]any{"max": 100.0}},
	} {
		_, err := askuser.ValidateAnswer(p, api.Answer{CustomInput: tc.in}, askuser.AnswerOptions{})
		var ae *askuser.AnswerError
		require.True(t, errors.As(err, &ae), "%s: %v", tc.in, err)
		require.Len(t, ae.Details, 1, tc.in)
		require.Equal(t, "customInput", ae.Details[0].Field, tc.in)
		require.Equal(t, tc.code, ae.Details[0].Code, tc.in)
		require.Equal(t, tc.params, ae.Details[0].Params, tc.in)
	}
	for in, want := range map[string]string{"1": "1", "3": "3", "100": "100", "2.0": "2", "1e1": "10"} {
		got, err := askuser.ValidateAnswer(p, api.Answer{CustomInput: in}, askuser.AnswerOptions{})
		require.NoError(t, err, in)
		require.Equal(t, want, got.CustomInput, "in its canonical decimal form")
	}

	// Without bounds any number goes, as before.
	free, err := askuser.ParseArgs(api.ToolAskUser, `{"title":"t","mode":"number"}`)
	require.NoError(t, err)
	_, err = askuser.ValidateAnswer(free, api.Answer{CustomInput: "-2.5"}, askuser.AnswerOptions{})
	require.NoError(t, err)

	for args, want := range map[string]string{
		`{"title":"t","mode":"text","minimum":1}`: "minimum: only mode number takes minimum (mode is text)",
		`{"title":"t","mode":"single","integer":true,"options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`: "integer: only mode number takes integer (mode is single)",
		`{"title":"t","mode":"number","minimum":5,"maximum":1}`:                                                  "maximum: must not be less than minimum (1 < 5)",
		`{"title":"t","mode":"number","integer":true,"minimum":1.2,"maximum":1.8}`:                               "maximum: no whole number lies between minimum 1.2 and maximum 1.8",
		`{"title":"t","mode":"number","minimum":"1"}`:                                                            "minimum: must be a number, got string",
	} {
		_, err := askuser.ParseArgs(api.ToolAskUser, args)
		var ae *askuser.ArgsError
		require.True(t, errors.As(err, &ae), "%s: %v", args, err)
		require.Equal(t, want, ae.Error(), args)
	}
}
