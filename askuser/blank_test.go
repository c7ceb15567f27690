package askuser_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

// Text that renders as nothing is blank: spaces, zero-width characters,
// format and control characters, the Hangul and Braille fillers.
var invisible = []string{
	"\u200b",             // zero width space
	"\u200c\u200d",       // zero width non-joiner, joiner
	"\u2060",             // word joiner
	"\ufeff",             // byte order mark
	" \u200b\t\u00a0",    // mixed with spaces
	"\u00ad",             // soft hyphen
	"\u3164",             // Hangul filler
	"\u2800",             // Braille pattern blank
	"\x00",               // NUL
	"\u200e\u200f\u202e", // direction marks and overrides
	"\ufe0f",             // a variation selector alone
}

func TestZeroWidthTextIsBlank(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, s := range invisible {
		_, err := askuser.ValidateAnswer(b.prompts["text"], api.Answer{CustomInput: s}, askuser.AnswerOptions{})
		requireField(t, err, "customInput", "enter some text", "%q", s)

		_, err = askuser.ValidateAnswer(b.prompts["single+custom"], api.Answer{CustomInput: s}, askuser.AnswerOptions{})
		requireField(t, err, "selections", "choose one option or write an answer in customInput", "%q", s)

		_, err = askuser.ValidateAnswer(b.prompts["batch"], api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Other: s},
			{Question: "Which features?"},
		}}, askuser.AnswerOptions{})
		requireField(t, err, "answers[0].selected", "choose one option or write an answer in other", "%q", s)

		_, err = askuser.ParseArgs(api.ToolAskUser, `{"title":"`+jsonEscape(s)+`","mode":"text"}`)
		var ae *askuser.ArgsError
		require.True(t, errors.As(err, &ae), "title %q: %v", s, err)
		require.Equal(t, "title", ae.Path)

		_, err = askuser.ParseArgs(api.ToolAskUser, `{"title":"t","mode":"single","options":[{"id":"a","label":"`+jsonEscape(s)+`"},{"id":"b","label":"B"}]}`)
		require.True(t, errors.As(err, &ae), "label %q: %v", s, err)
		require.Equal(t, "options[0].label", ae.Path)
	}
	// Visible text next to invisible characters is not blank, and is kept as sent.
	got, err := askuser.ValidateAnswer(b.prompts["text"], api.Answer{CustomInput: "\u200bok\u200b"}, askuser.AnswerOptions{})
	require.NoError(t, err)
	require.Equal(t, "\u200bok\u200b", got.CustomInput)
	// An emoji with a variation selector is visible.
	_, err = askuser.ValidateAnswer(b.prompts["text"], api.Answer{CustomInput: "\u2764\ufe0f"}, askuser.AnswerOptions{})
	require.NoError(t, err)
}

func TestNumberWithoutLeadingZero(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// What <input type=number> submits when a person types ".5" or "-.5".
	for _, s := range []string{".5", "-.5", ".25e2", " .5 "} {
		got, err := askuser.ValidateAnswer(b.prompts["number"], api.Answer{CustomInput: s}, askuser.AnswerOptions{})
		require.NoError(t, err, "%q", s)
		require.Equal(t, []string{}, got.Selections)
		require.NotEqual(t, "", got.CustomInput)
	}
}

func TestDirectoryBlankName(t *testing.T) {
	t.Parallel()
	b := setupDirs(t)
	opts := askuser.AnswerOptions{Workspace: b.ws}
	for _, s := range []string{"   /", "   ", "src/  /x", "src/\u200b", "\u3164/"} {
		_, err := askuser.ValidateAnswer(b.prompt, api.Answer{CustomInput: s}, opts)
		var ae *askuser.AnswerError
		require.True(t, errors.As(err, &ae), "%q accepted", s)
		require.Equal(t, "customInput", ae.Details[0].Field)
	}
	// A name with spaces inside it is a name.
	got, err := askuser.ValidateAnswer(b.prompt, api.Answer{CustomInput: "src/my dir"}, opts)
	require.NoError(t, err)
	require.Equal(t, "src/my dir", got.CustomInput)
}

func requireField(t *testing.T, err error, field, message string, msgAndArgs ...any) {
	t.Helper()
	var ae *askuser.AnswerError
	require.True(t, errors.As(err, &ae), msgAndArgs...)
	require.Len(t, ae.Details, 1, msgAndArgs...)
	require.Equal(t, [2]string{field, message}, [2]string{ae.Details[0].Field, ae.Details[0].Message}, msgAndArgs...)
}

func jsonEscape(s string) string {
	out := ""
	for _, r := range s {
		out += `\u` + hex4(r)
	}
	return out
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}
