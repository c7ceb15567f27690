package askuser_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

// opts renders n ask_user options o1..on with labels L1..Ln.
func opts(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"id":"o%d","label":"L%d"}`, i+1, i+1)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// qopts renders n AskUser options A1..An.
func qopts(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"label":"A%d","description":"d"}`, i+1)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func TestParseArgsRejects(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("字", n) }
	tests := []struct {
		name, tool, raw, want string
	}{
		// The arguments text as a whole.
		{"unknown tool", "ask", `{}`, `unknown tool "ask": want "ask_user" or "AskUser"`},
		{"empty", api.ToolAskUser, ``, "arguments are empty: send a JSON object matching the tool's schema"},
		{"blank", api.ToolAskUser, " \n\t", "arguments are empty: send a JSON object matching the tool's schema"},
		{"invalid JSON", api.ToolAskUser, `{"title":`, "arguments are not valid JSON: unexpected EOF"},
		{"trailing data", api.ToolAskUser, `{"title":"a","mode":"text"} {}`, "arguments are not valid JSON: invalid character after top-level value"},
		{"array", api.ToolAskUser, `[]`, "arguments must be a JSON object, got array"},
		{"null", api.ToolAskUser, `null`, "arguments must be a JSON object, got null"},
		{"double-encoded object", api.ToolAskUser, `"{\"title\":\"a\",\"mode\":\"text\"}"`, "arguments must be a JSON object, got string"},
		{"too large", api.ToolAskUser, `{"title":"` + strings.Repeat("a", askuser.MaxArgsBytes) + `"}`, fmt.Sprintf("arguments are too large: %d bytes, at most %d", askuser.MaxArgsBytes+12, askuser.MaxArgsBytes)},

		// ask_user: schema rules, docs/design.md §A.1.
		{"missing title", api.ToolAskUser, `{"mode":"text"}`, "title: required but missing"},
		{"missing mode", api.ToolAskUser, `{"title":"a"}`, "mode: required but missing"},
		{"unknown mode", api.ToolAskUser, `{"title":"a","mode":"radio"}`, `mode: must be one of single, multiple, text, number, date, directory, toggle; got "radio"`},
		{"title number", api.ToolAskUser, `{"title":1,"mode":"text"}`, "title: must be a string, got number"},
		{"title null", api.ToolAskUser, `{"title":null,"mode":"text"}`, "title: must be a string, got null"},
		{"description null", api.ToolAskUser, `{"title":"a","mode":"text","description":null}`, "description: must be a string, got null; omit the field instead"},
		{"allowCustom string", api.ToolAskUser, `{"title":"a","mode":"text","allowCustom":"true"}`, "allowCustom: must be a boolean, got string"},
		{"unknown field", api.ToolAskUser, `{"title":"a","mode":"text","question":"b"}`, "question: unknown field; allowed: title, description, mode, options, allowCustom, submitLabel, minimum, maximum, integer"},
		{"unknown option field", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a","label":"A","value":1},{"id":"b","label":"B"}]}`, "options[0].value: unknown field; allowed: id, label, description, recommended"},
		{"odd unknown field quoted", api.ToolAskUser, `{"title":"a","mode":"text","x y":1}`, `"x y": unknown field; allowed: title, description, mode, options, allowCustom, submitLabel, minimum, maximum, integer`},
		{"empty title", api.ToolAskUser, `{"title":"","mode":"text"}`, "title: must not be empty"},
		{"blank title", api.ToolAskUser, `{"title":"  ","mode":"text"}`, "title: must not be blank"},
		{"title too long in runes", api.ToolAskUser, `{"title":"` + long(201) + `","mode":"text"}`, "title: too long: 201 characters, at most 200"},
		{"description too long", api.ToolAskUser, `{"title":"a","mode":"text","description":"` + long(2001) + `"}`, "description: too long: 2001 characters, at most 2000"},
		{"submitLabel too long", api.ToolAskUser, `{"title":"a","mode":"text","submitLabel":"` + long(41) + `"}`, "submitLabel: too long: 41 characters, at most 40"},
		{"id too long", api.ToolAskUser, `{"title":"a","mode":"toggle","options":[{"id":"` + long(65) + `","label":"A"}]}`, "options[0].id: too long: 65 characters, at most 64"},
		{"label too long", api.ToolAskUser, `{"title":"a","mode":"toggle","options":[{"id":"a","label":"` + long(201) + `"}]}`, "options[0].label: too long: 201 characters, at most 200"},
		{"option description too long", api.ToolAskUser, `{"title":"a","mode":"toggle","options":[{"id":"a","label":"A","description":"` + long(1001) + `"}]}`, "options[0].description: too long: 1001 characters, at most 1000"},
		{"options object", api.ToolAskUser, `{"title":"a","mode":"single","options":{"id":"a"}}`, "options: must be an array, got object"},
		{"option missing id", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a","label":"A"},{"label":"B"}]}`, "options[1].id: required but missing"},
		{"option missing label", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a"},{"id":"b","label":"B"}]}`, "options[0].label: required but missing"},
		{"option a string", api.ToolAskUser, `{"title":"a","mode":"single","options":["a","b"]}`, "options[0]: must be an object, got string"},
		{"too many options", api.ToolAskUser, `{"title":"a","mode":"multiple","options":` + opts(21) + `}`, "options: too many options: got 21, at most 20"},

		// ask_user: rules beyond the schema, issue 2 §2.
		{"single with one option", api.ToolAskUser, `{"title":"a","mode":"single","options":` + opts(1) + `}`, "options: mode single needs at least 2 options, got 1"},
		{"single without options", api.ToolAskUser, `{"title":"a","mode":"single"}`, "options: mode single needs at least 2 options, got 0"},
		{"multiple with one option", api.ToolAskUser, `{"title":"a","mode":"multiple","options":` + opts(1) + `}`, "options: mode multiple needs at least 2 options, got 1"},
		{"toggle without options", api.ToolAskUser, `{"title":"a","mode":"toggle","options":[]}`, "options: mode toggle needs at least 1 option, got 0"},
		{"text with options", api.ToolAskUser, `{"title":"a","mode":"text","options":` + opts(2) + `}`, "options: mode text takes no options (got 2); use single, multiple or toggle to offer choices"},
		{"number with options", api.ToolAskUser, `{"title":"a","mode":"number","options":` + opts(1) + `}`, "options: mode number takes no options (got 1); use single, multiple or toggle to offer choices"},
		{"date with options", api.ToolAskUser, `{"title":"a","mode":"date","options":` + opts(1) + `}`, "options: mode date takes no options (got 1); use single, multiple or toggle to offer choices"},
		{"directory with options", api.ToolAskUser, `{"title":"a","mode":"directory","options":` + opts(1) + `}`, "options: mode directory takes no options (got 1); use single, multiple or toggle to offer choices"},
		{"duplicate id", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a","label":"A"},{"id":"a","label":"B"}]}`, "options[1].id: duplicate of options[0].id"},
		{"empty id", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"","label":"A"},{"id":"b","label":"B"}]}`, "options[0].id: must not be empty"},
		{"blank id", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a","label":"A"},{"id":" ","label":"B"}]}`, "options[1].id: must not be blank"},
		{"id with spaces around", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a ","label":"A"},{"id":"b","label":"B"}]}`, "options[0].id: must not start or end with spaces"},
		{"blank label", api.ToolAskUser, `{"title":"a","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":" \t"}]}`, "options[1].label: must not be blank"},
		{"duplicate label", api.ToolAskUser, `{"title":"a","mode":"multiple","options":[{"id":"a","label":"先分析"},{"id":"b","label":"B"},{"id":"c","label":" 先分析"}]}`, "options[2].label: duplicate of options[0].label"},

		// The JSON-encoded-string quirk is decoded once; nothing else is.
		{"encoded options with duplicate", api.ToolAskUser, `{"title":"a","mode":"single","options":"[{\"id\":\"a\",\"label\":\"A\"},{\"id\":\"a\",\"label\":\"B\"}]"}`, "options[1].id: duplicate of options[0].id"},
		{"encoded options broken", api.ToolAskUser, `{"title":"a","mode":"single","options":"[{\"id\":"}`, "options: not valid JSON inside the string: unexpected EOF"},
		{"encoded options plain text", api.ToolAskUser, `{"title":"a","mode":"single","options":"a, b"}`, "options: not valid JSON inside the string: invalid character 'a' looking for beginning of value"},
		{"encoded options not an array", api.ToolAskUser, `{"title":"a","mode":"single","options":"{\"id\":\"a\"}"}`, "options: must be an array, got string"},
		{"encoded twice", api.ToolAskUser, `{"title":"a","mode":"single","options":"\"[]\""}`, "options: must be an array, got string"},
		{"encoded option item", api.ToolAskUser, `{"title":"a","mode":"single","options":["{\"id\":\"a\",\"label\":\"A\"}","{\"id\":\"b\",\"label\":\"B\"}"]}`, "options[0]: must be an object, got string"},
		{"encoded boolean", api.ToolAskUser, `{"title":"a","mode":"text","allowCustom":"false"}`, "allowCustom: must be a boolean, got string"},

		// AskUser: schema rules, AgentScope AskUser.
		{"no questions field", api.ToolAskUserBatch, `{}`, "questions: required but missing"},
		{"zero questions", api.ToolAskUserBatch, `{"questions":[]}`, "questions: too few questions: got 0, at least 1"},
		{"five questions", api.ToolAskUserBatch, `{"questions":[` + strings.TrimSuffix(strings.Repeat(`{"question":"q","header":"h","options":`+qopts(2)+`},`, 5), ",") + `]}`, "questions: too many questions: got 5, at most 4"},
		{"one option", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":` + qopts(1) + `}]}`, "questions[0].options: too few options: got 1, at least 2"},
		{"five options", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":` + qopts(5) + `}]}`, "questions[0].options: too many options: got 5, at most 4"},
		{"header 13 characters", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"` + long(13) + `","options":` + qopts(2) + `}]}`, "questions[0].header: too long: 13 characters, at most 12"},
		{"missing header", api.ToolAskUserBatch, `{"questions":[{"question":"q","options":` + qopts(2) + `}]}`, "questions[0].header: required but missing"},
		{"missing option description", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a"},{"label":"b","description":""}]}]}`, "questions[0].options[0].description: required but missing"},
		{"multi_select string", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","multi_select":"yes","options":` + qopts(2) + `}]}`, "questions[0].multi_select: must be a boolean, got string"},
		{"ask_user field in AskUser", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":` + qopts(2) + `}],"title":"t"}`, "title: unknown field; allowed: questions"},
		{"multiSelect camel case", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","multiSelect":true,"options":` + qopts(2) + `}]}`, "questions[0].multiSelect: unknown field; allowed: question, header, context, options, multi_select"},
		{"context too long", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","context":"` + long(8001) + `","options":` + qopts(2) + `}]}`, "questions[0].context: too long: 8001 characters, at most 8000"},
		{"preview too long", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":"","preview":"` + long(8001) + `"},{"label":"b","description":""}]}]}`, "questions[0].options[0].preview: too long: 8001 characters, at most 8000"},
		{"question too long", api.ToolAskUserBatch, `{"questions":[{"question":"` + long(501) + `","header":"h","options":` + qopts(2) + `}]}`, "questions[0].question: too long: 501 characters, at most 500"},

		// AskUser: rules beyond the schema.
		{"duplicate question", api.ToolAskUserBatch, `{"questions":[{"question":"Which DB?","header":"h","options":` + qopts(2) + `},{"question":"Which DB? ","header":"h2","options":` + qopts(2) + `}]}`, "questions[1].question: duplicate of questions[0].question"},
		{"blank question", api.ToolAskUserBatch, `{"questions":[{"question":" ","header":"h","options":` + qopts(2) + `}]}`, "questions[0].question: must not be blank"},
		{"blank header", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"  ","options":` + qopts(2) + `}]}`, "questions[0].header: must not be blank"},
		{"duplicate label", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":""},{"label":"a","description":"x"}]}]}`, "questions[0].options[1].label: duplicate of questions[0].options[0].label"},
		{"blank label", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":""},{"label":" ","description":"x"}]}]}`, "questions[0].options[1].label: must not be blank"},
		{"Other option", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":""},{"label":"Other","description":""}]}]}`, `questions[0].options[1].label: do not add an "Other" option: the user can always answer in their own words`},
		{"other option with hint", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"a","description":""},{"label":"other (please specify)","description":""}]}]}`, `questions[0].options[1].label: do not add an "Other" option: the user can always answer in their own words`},
		{"其他 option", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":[{"label":"其他","description":""},{"label":"b","description":""}]}]}`, `questions[0].options[0].label: do not add an "Other" option: the user can always answer in their own words`},
		{"preview on multi_select", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","multi_select":true,"options":[{"label":"a","description":""},{"label":"b","description":"","preview":"x"}]}]}`, "questions[0].options[1].preview: preview is only supported on single-select questions (this one has multi_select: true)"},
		{"encoded questions broken", api.ToolAskUserBatch, `{"questions":"[{"}`, "questions: not valid JSON inside the string: unexpected EOF"},
		{"encoded question options broken", api.ToolAskUserBatch, `{"questions":[{"question":"q","header":"h","options":"[1,"}]}`, "questions[0].options: not valid JSON inside the string: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := askuser.ParseArgs(tt.tool, tt.raw)
			require.Nil(t, p)
			var ae *askuser.ArgsError
			require.True(t, errors.As(err, &ae), "want *ArgsError, got %T %v", err, err)
			require.Equal(t, tt.want, err.Error())
		})
	}
}

func TestParseArgsAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, raw string
		want            api.Prompt
	}{
		{
			name: "docs/design.md §A.1 example",
			tool: api.ToolAskUser,
			raw: `{"title":"请选择执行方式","description":"不同方式会影响接下来的工具权限。","mode":"single",
				"options":[{"id":"safe","label":"先分析","description":"只阅读并给出方案","recommended":true},
				{"id":"implement","label":"直接实现","description":"开始修改工作区"}],"allowCustom":false,"submitLabel":"继续"}`,
			want: api.Prompt{
				Tool: api.ToolAskUser, Title: "请选择执行方式", Description: "不同方式会影响接下来的工具权限。", Mode: api.ModeSingle,
				Options: []api.Option{
					{ID: "safe", Label: "先分析", Description: "只阅读并给出方案", Recommended: true},
					{ID: "implement", Label: "直接实现", Description: "开始修改工作区"},
				},
				SubmitLabel: "继续",
			},
		},
		{
			name: "encoded options decoded once",
			tool: api.ToolAskUser,
			raw:  `{"title":"t","mode":"multiple","allowCustom":true,"options":"[{\"id\":\"a\",\"label\":\"A\"},{\"id\":\"b\",\"label\":\"🙂\"}]"}`,
			want: api.Prompt{Tool: api.ToolAskUser, Title: "t", Mode: api.ModeMultiple, AllowCustom: true,
				Options: []api.Option{{ID: "a", Label: "A"}, {ID: "b", Label: "🙂"}}},
		},
		{
			name: "text with empty options",
			tool: api.ToolAskUser,
			raw:  `{"title":"Name?","mode":"text","options":[]}`,
			want: api.Prompt{Tool: api.ToolAskUser, Title: "Name?", Mode: api.ModeText},
		},
		{
			name: "toggle with one option, bounds in runes",
			tool: api.ToolAskUser,
			raw:  `{"title":"` + strings.Repeat("题", askuser.MaxTitleLen) + `","mode":"toggle","options":[{"id":"x","label":"X"}]}`,
			want: api.Prompt{Tool: api.ToolAskUser, Title: strings.Repeat("题", askuser.MaxTitleLen), Mode: api.ModeToggle,
				Options: []api.Option{{ID: "x", Label: "X"}}},
		},
		{
			name: "AskUser batch with encoded questions and options",
			tool: api.ToolAskUserBatch,
			raw: `{"questions":"[{\"question\":\"Which database?\",\"header\":\"数据库存储引擎选择一二三\",\"context\":\"see diff\",` +
				`\"options\":\"[{\\\"label\\\":\\\"SQLite (Recommended)\\\",\\\"description\\\":\\\"embedded\\\",\\\"preview\\\":\\\"db: sqlite\\\"},{\\\"label\\\":\\\"PostgreSQL\\\",\\\"description\\\":\\\"server\\\"}]\"},` +
				`{\"question\":\"Which features?\",\"header\":\"Features\",\"multi_select\":true,\"options\":[{\"label\":\"Auth\",\"description\":\"\"},{\"label\":\"Search\",\"description\":\"\"}]}]"}`,
			want: api.Prompt{
				Tool: api.ToolAskUserBatch, Title: "Which database?", Mode: api.ModeQuestions,
				Questions: []api.Question{
					{Question: "Which database?", Header: "数据库存储引擎选择一二三", Context: "see diff", Options: []api.QuestionOption{
						{Label: "SQLite (Recommended)", Description: "embedded", Preview: "db: sqlite"}, {Label: "PostgreSQL", Description: "server"}}},
					{Question: "Which features?", Header: "Features", MultiSelect: true, Options: []api.QuestionOption{
						{Label: "Auth"}, {Label: "Search"}}},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := askuser.ParseArgs(tt.tool, tt.raw)
			require.NoError(t, err)
			require.Equal(t, tt.want, *p)
		})
	}
}

// A key given twice is read as the schema read it, the last one: nothing of
// an earlier one (here an option description over the bound) reaches the
// prompt unvalidated.
func TestParseArgsRepeatedKey(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("字", askuser.MaxOptionDescriptionLen+1)
	raw := `{"title":"a","mode":"single",` +
		`"options":[{"id":"a","label":"A","description":"` + long + `"},{"id":"b","label":"B","description":"` + long + `"}],` +
		`"options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`
	p, err := askuser.ParseArgs(api.ToolAskUser, raw)
	require.NoError(t, err)
	require.Len(t, p.Options, 2)
	for _, o := range p.Options {
		require.Empty(t, o.Description)
	}
}
