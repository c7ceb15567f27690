package askuser_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

// fastBases are ask_user arguments the one-pass decoder reads: every field,
// escapes of each kind, numbers of each form, white space everywhere.
var fastBases = []string{
	`{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`,
	`{"title":"请选择执行方式","description":"不同方式会影响接下来的工具权限。","mode":"single",
		"options":[{"id":"safe","label":"先分析","description":"只阅读并给出方案","recommended":true},
		{"id":"implement","label":"直接实现","description":"开始修改工作区","recommended":false}],"allowCustom":false,"submitLabel":"继续"}`,
	` { "mode" : "number" , "title" : "How many?" , "minimum" : -1.5e2 , "maximum" : 10 , "integer" : true } `,
	`{"title":"n","mode":"number","minimum":0,"maximum":0.25E+1,"allowCustom":true}`,
	`{"title":"Name?","mode":"text","options":[]}`,
	`{"title":"Line\nbreak \"quoted\" \\ \/ \b\f\r\t \u00e9\u4E2D \ud83d\ude42 <&>","mode":"toggle","options":[{"id":"x\u0041","label":"🙂 \u2028"}]}`,
	`{"title":"` + strings.Repeat("题", askuser.MaxTitleLen) + `","mode":"multiple","options":[{"id":"a","label":"A"},{"id":"b","label":"B"},{"id":"c","label":"C","description":""}]}`,
	`{"title":"d","mode":"date","description":"","submitLabel":""}`,
	`{"title":"dir","mode":"directory"}`,
	`{"title":"t","mode":"multiple","options":` + opts(askuser.MaxOptions) + `}`,
}

// fastRejects are arguments either path must refuse, or the decoder must
// leave to the schema path.
var fastRejects = []string{
	`{"title":"a","mode":"single","options":[{"id":"a","label":"A"},{"id":"a","label":"B"}]}`,
	`{"title":"a","mode":"single","options":"[{\"id\":\"a\",\"label\":\"A\"},{\"id\":\"b\",\"label\":\"B\"}]"}`,
	`{"title":"a","mode":"text","title":"b"}`,
	`{"title":"a","mode":"text","description":null}`,
	`{"title":"a","mode":"text","minimum":1e400}`,
	`{"title":"a","mode":"number","minimum":1e-400}`,
	`{"title":"a","mode":"number","minimum":01}`,
	`{"title":"a","mode":"number","minimum":1.}`,
	`{"title":"a","mode":"number","minimum":.5}`,
	`{"title":"a","mode":"number","minimum":+1}`,
	`{"title":"a","mode":"number","minimum":"1"}`,
	`{"title":"\ud800","mode":"text"}`,
	`{"title":"\udc00\ud800","mode":"text"}`,
	`{"title":"\ud83d\u0041","mode":"text"}`,
	"{\"title\":\"\xff\",\"mode\":\"text\"}",
	"{\"title\":\"a\xe4\",\"mode\":\"text\"}",
	"{\"title\":\"a\xe4\\u00e9\",\"mode\":\"text\"}",
	"{\"title\":\"tab\there\",\"mode\":\"text\"}",
	`{"title":"a","mode":"text","x":1}`,
	`{"title":"a","mode":"text"}x`,
	`{"title":"a","mode":"text"}{}`,
	`{"title":"a","mode":"text",}`,
	`{"title":"a" "mode":"text"}`,
	`{"title":"a","mode":"Text"}`,
	`{"Title":"a","mode":"text"}`,
	`{"t\u0069tle":"a","mode":"text"}`,
	`{"title":"a","mode":"toggle","options":[{"id":"a","label":"A",}]}`,
	`{"title":"a","mode":"toggle","options":[{"id":"a","label":"A"},]}`,
	`{"title":"a","mode":"toggle","options":[{"id":"a","label":"A","recommended":1}]}`,
	`{"title":"a","mode":"toggle","options":[{"id":"a","label":"A","id":"b"}]}`,
	`{"title":"a","mode":"toggle","options":[{"id":"a","label":"A"}],"options":[{"id":"b","label":"B"}]}`,
	`{"title":"a","mode":"multiple","options":` + opts(askuser.MaxOptions+1) + `}`,
	`{"title":"` + strings.Repeat("题", askuser.MaxTitleLen+1) + `","mode":"text"}`,
	`{"title":"","mode":"text"}`,
	`{"title":"a","mode":"text","submitLabel":"` + strings.Repeat("a", askuser.MaxSubmitLabelLen+1) + `"}`,
	`{"title":"a","mode":"text","integer":true}`,
	`{"title":"a","mode":"number","minimum":2,"maximum":1}`,
	`{"title":"a","mode":"number","integer":true,"minimum":1.2,"maximum":1.5}`,
	`{"title":"a","mode":"single","options":[{"id":" a","label":"A"},{"id":"b","label":"B"}]}`,
	`{"title":"  ","mode":"text"}`,
	`{"title":"a","mode":"text","allowCustom":tru}`,
	`{"title":"a","mode":"text","allowCustom":truefalse}`,
	`{}`, `[]`, `"x"`, `{`, `{"title"`, `{"title":`, `{"title":"a"`, `{"title":"a",`,
}

// requireSameAsSchema fails unless ParseArgs gives for raw what the schema
// path gives: the same Prompt, or the same error.
func requireSameAsSchema(t *testing.T, raw string) {
	t.Helper()
	want, wantErr := askuser.ParseArgsSchema(api.ToolAskUser, raw)
	got, err := askuser.ParseArgs(api.ToolAskUser, raw)
	if wantErr != nil {
		require.Error(t, err, "%q", raw)
		require.Equal(t, wantErr.Error(), err.Error(), "%q", raw)
		require.Nil(t, got)
		return
	}
	require.NoError(t, err, "%q", raw)
	require.Equal(t, want, got, "%q", raw)
}

// TestDecodeAskUserIsTheSchema compares ParseArgs with its schema path (the
// oracle: decode, validate against the JSON Schema, encode, decode) over the
// bases, the rejects, and every truncation, byte deletion and insertion of
// a JSON token or odd byte at each position of the bases, and every value
// of the bases replaced by a value of another type or repeated.
func TestDecodeAskUserIsTheSchema(t *testing.T) {
	t.Parallel()
	for _, raw := range fastBases {
		require.True(t, askuser.DecodesFast(raw), "the decoder leaves a common shape to the schema path: %s", raw)
		p, err := askuser.ParseArgs(api.ToolAskUser, raw)
		require.NoError(t, err, "%s", raw)
		require.NotNil(t, p)
		requireSameAsSchema(t, raw)
	}
	for _, raw := range fastRejects {
		requireSameAsSchema(t, raw)
	}
	inserts := []string{`"`, `,`, `:`, `\`, ` `, `{`, `}`, `[`, `]`, `1`, `-`, `e`, `.`, `null`, `true`, `é`, "\xff", "\x01", "\x1f", `\u`, `"x":1,`, `"title":"b",`}
	fast, inputs := 0, 0
	for _, base := range fastBases[:7] {
		for i := 0; i <= len(base); i++ {
			variants := []string{base[:i]}
			if i < len(base) {
				variants = append(variants, base[:i]+base[i+1:])
			}
			for _, ins := range inserts {
				variants = append(variants, base[:i]+ins+base[i:])
			}
			for _, raw := range variants {
				inputs++
				if askuser.DecodesFast(raw) {
					fast++
				}
				requireSameAsSchema(t, raw)
			}
		}
	}
	// Values replaced and keys repeated, field by field.
	for _, base := range fastBases {
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(base), &obj))
		for key, val := range obj {
			for _, repl := range []string{`null`, `1`, `-0`, `"x"`, `""`, `true`, `[]`, `{}`, `[{"id":"a","label":"A"}]`, `"[]"`, string(val)} {
				o := map[string]json.RawMessage{}
				for k, v := range obj {
					o[k] = v
				}
				o[key] = json.RawMessage(repl)
				b, err := json.Marshal(o)
				require.NoError(t, err)
				requireSameAsSchema(t, string(b))
				// The key given again, after the others.
				dup := strings.TrimSuffix(string(b), "}") + `,"` + key + `":` + repl + `}`
				requireSameAsSchema(t, dup)
				dup = strings.TrimSuffix(string(b), "}") + `,"` + key + `":` + string(val) + `}`
				requireSameAsSchema(t, dup)
			}
		}
	}
	// The decoder must have read a share of the variants itself, or this
	// compared the schema path with itself.
	t.Logf("decoded fast: %d of %d", fast, inputs)
	require.Greater(t, fast, inputs/20, "decoded fast: %d of %d", fast, inputs)
}
