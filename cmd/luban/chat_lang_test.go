package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
)

func hasHan(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// The terminal's language: --lang, else LUBAN_LANG, else the locale
// (LC_ALL, LC_MESSAGES, LANG in that order; zh* is Chinese).
func TestChatLanguageChoice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want chatLang
	}{
		{"nothing set", nil, nil, langEN},
		{"LANG zh", map[string]string{"LANG": "zh_CN.UTF-8"}, nil, langZH},
		{"LANG en", map[string]string{"LANG": "en_US.UTF-8"}, nil, langEN},
		{"C locale", map[string]string{"LANG": "C"}, nil, langEN},
		{"LC_MESSAGES over LANG", map[string]string{"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_GB.UTF-8"}, nil, langEN},
		{"LC_ALL over all", map[string]string{"LANG": "en_US.UTF-8", "LC_MESSAGES": "en_US", "LC_ALL": "zh_TW.UTF-8"}, nil, langZH},
		{"LUBAN_LANG over the locale", map[string]string{"LC_ALL": "zh_CN.UTF-8", "LUBAN_LANG": "en"}, nil, langEN},
		{"--lang over LUBAN_LANG", map[string]string{"LUBAN_LANG": "en"}, []string{"--lang", "zh"}, langZH},
		{"--lang=en", map[string]string{"LANG": "zh_CN.UTF-8"}, []string{"--lang=en"}, langEN},
	} {
		getenv := envOf(tc.env)
		lang := localeLang(getenv)
		if v := or(langArg(tc.args), getenv("LUBAN_LANG")); v != "" {
			l, err := parseLang(v)
			require.NoError(t, err, tc.name)
			lang = l
		}
		require.Equal(t, tc.want, lang, tc.name)
	}
	_, err := parseLang("fr")
	require.Error(t, err)
}

// An unknown --lang is a usage error; --help is in the chosen language and
// names LUBAN_LANG.
func TestChatLangFlag(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	c := &Chat{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: envOf(map[string]string{"LUBAN_AUTH_TOKEN": "t"})}
	var u *usageError
	require.ErrorAs(t, c.Run(t.Context(), []string{"--lang", "fr"}), &u)
	require.Contains(t, u.Error(), "zh or en")

	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
		zh   bool
	}{
		{[]string{"--help"}, nil, "Usage: luban chat", false},
		{[]string{"--lang", "zh", "--help"}, nil, "用法：luban chat", true},
		{[]string{"--help"}, map[string]string{"LANG": "zh_CN.UTF-8"}, "用法：luban chat", true},
	} {
		out.Reset()
		c := &Chat{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: envOf(tc.env)}
		_ = c.Run(t.Context(), tc.args)
		require.Contains(t, out.String(), tc.want, tc.args)
		require.Contains(t, out.String(), "LUBAN_LANG")
		if !tc.zh {
			require.False(t, hasHan(out.String()), "English help has no Chinese: %s", out.String())
		}
	}
}

// Every field error code is worded in both languages from field, code and
// params, without the server's English message; an unknown code falls back
// to that message.
func TestChatWordsEveryFieldCode(t *testing.T) {
	t.Parallel()
	// params as they arrive over HTTP (numbers are float64).
	params := func(s string) map[string]any {
		if s == "" {
			return nil
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &m))
		return m
	}
	const msg = "SERVER-ENGLISH"
	for _, tc := range []struct {
		field  string
		code   api.FieldCode
		params string
		zh, en string
	}{
		{"customInput", api.DetailRequired, ``, "回答：必填", "answer: required"},
		{"answers", api.DetailRequired, `{"question":"Which DB?"}`, "回答：还没有回答问题「Which DB?」", `answers: question "Which DB?" has no answer yet`},
		{"selection", api.DetailUnknownField, ``, "selection：没有这个字段", "selection: no such field"},
		{"", api.DetailInvalidType, `{"expected":"object","got":"array"}`, "请求体应为 JSON 对象", "the body must be a JSON object"},
		{"arguments.replicas", api.DetailInvalidType, `{"expected":"integer","got":"string"}`, "参数 replicas：应为整数", "argument replicas: must be an integer"},
		{"arguments", api.DetailInvalidJSON, ``, "参数：不是有效的 JSON", "arguments: not valid JSON"},
		{"selections", api.DetailTooFew, `{"min":1,"got":0}`, "选项：至少选择 1 项", "choice: choose at least 1"},
		{"selections", api.DetailTooMany, `{"max":1,"got":2}`, "选项：最多选择 1 项", "choice: choose at most 1"},
		{"content.tags", api.DetailTooMany, `{"max":2,"got":3,"unit":"items"}`, "字段 tags：最多 2 项", "field tags: at most 2 items"},
		{"selections[0]", api.DetailUnknownOption, `{"option":"z"}`, "选项：没有选项「z」", `choice: there is no option "z"`},
		{"answers[1].question", api.DetailUnknownQuestion, `{"question":"Color?"}`, "第 2 个问题：没有问题「Color?」", `question 2: there is no question "Color?"`},
		{"selections[2]", api.DetailDuplicate, `{"of":"selections[0]","option":"a"}`, "选项：「a」选了两次", `choice: "a" is chosen twice`},
		{"customInput", api.DetailTooLong, `{"max":8000,"got":8001,"unit":"characters"}`, "回答：最多 8000 个字（现在 8001）", "answer: at most 8000 characters (now 8001)"},
		{"content", api.DetailTooLong, `{"max":65536,"got":70000,"unit":"bytes"}`, "表单：最多 65536 字节（现在 70000）", "form: at most 65536 bytes (now 70000)"},
		{"arguments.path", api.DetailTooShort, `{"min":1,"got":0,"unit":"characters"}`, "参数 path：至少 1 个字", "argument path: at least 1 characters"},
		{"content.n", api.DetailOutOfRange, `{"min":1}`, "字段 n：不能小于 1", "field n: at least 1"},
		{"content.n", api.DetailOutOfRange, `{"max":3.5}`, "字段 n：不能大于 3.5", "field n: at most 3.5"},
		{"content.n", api.DetailOutOfRange, `{"exclusiveMin":0}`, "字段 n：必须大于 0", "field n: more than 0"},
		{"customInput", api.DetailOutOfRange, ``, "回答：数字超出范围", "answer: the number is out of range"},
		{"content.n", api.DetailNotMultiple, `{"multipleOf":5}`, "字段 n：必须是 5 的倍数", "field n: must be a multiple of 5"},
		{"arguments.env", api.DetailPattern, `{"pattern":"^[a-z]+$"}`, "参数 env：格式不符（^[a-z]+$）", "argument env: does not match ^[a-z]+$"},
		{"customInput", api.DetailFormat, `{"format":"number"}`, "回答：请输入完整的数字（如 42、-3.5、1e3）", "answer: enter a number written in full (like 42, -3.5 or 1e3)"},
		{"customInput", api.DetailFormat, `{"format":"date"}`, "回答：不是有效的日期（YYYY-MM-DD）", "answer: not a real date (YYYY-MM-DD)"},
		{"content.email", api.DetailFormat, `{"format":"email"}`, "字段 email：不是有效的邮箱地址", "field email: not an e-mail address"},
		{"decision", api.DetailEnum, `{"allowed":["approve","edit","reject"]}`, "决定：只能是 approve、edit、reject", "decision: must be one of approve, edit, reject"},
		{"customInput", api.DetailNotAllowed, ``, "回答：这里不能填写", "answer: not allowed here"},
		{"decision", api.DetailConflictWithKind, ``, "决定：不属于这类问题的回答", "decision: does not belong to this kind of question"},
		{"requestId", api.DetailNoQuestion, ``, "问题：没有待回答的问题", "question: there is no question to answer"},
		{"customInput", api.DetailOutsideWorkspace, `{"path":"../x"}`, "回答：「../x」在工作区之外", `answer: "../x" is outside the workspace`},
		{"customInput", api.DetailNoWorkspace, ``, "回答：服务没有配置工作区（--workspace）", "answer: the server has no workspace (--workspace)"},
		{"customInput", api.DetailNotDirectory, `{"path":"a.txt"}`, "回答：「a.txt」不是目录", `answer: "a.txt" is not a directory`},
		{"arguments.path", api.DetailIsDirectory, `{"path":"docs"}`, "参数 path：「docs」是目录，不是文件", `argument path: "docs" is a directory, not a file`},
		{"customInput", api.DetailInvalidPath, `{"path":"a\u0000"}`, "回答：「a\\x00」不是可用的路径", `answer: "a\x00" cannot be used as a path`},
		{"answers[0].other", api.DetailTooLong, `{"max":10,"unit":"characters"}`, "第 1 个问题的“其他”：最多 10 个字", "question 1 (other): at most 10 characters"},
		{"message", api.FieldCode("some_new_code"), ``, "理由：" + msg, "reason: " + msg},
		{"customInput", api.DetailInvalid, ``, "回答：" + msg, "answer: " + msg},
	} {
		d := api.FieldError{Field: tc.field, Code: tc.code, Params: params(tc.params), Message: msg}
		zh, en := detailText(d, langZH), detailText(d, langEN)
		require.Equal(t, tc.zh, zh, "%s %s", tc.field, tc.code)
		require.Equal(t, tc.en, en, "%s %s", tc.field, tc.code)
		require.False(t, hasHan(en), "no Chinese in English: %s", en)
	}
}

// The same Chinese question in both terminal languages: with --lang en
// every word the terminal adds is English (the model's text stays as it
// is), with LANG=zh_CN every word is Chinese.
func TestChatSpeaksOneLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		locale string
		args   []string
		want   []string
	}{
		{"zh_CN.UTF-8", nil, []string{"luban chat：输入消息后按回车", "（/cancel 取消，/quit 稍后再答）", "选择一项 (1-2): 9", "  ! 请输入 1 到 2 之间的数字", "✓ 已提交：先分析", "[任务已完成]", "再见。之后继续："}},
		{"zh_CN.UTF-8", []string{"--lang", "en"}, []string{"luban chat: type a message", "(/cancel to decline, /quit to answer later)", "choose one (1-2): 9", "  ! enter numbers from 1 to 2", "✓ answered: 先分析", "[run completed]", "bye. continue with:"}},
	} {
		b := setup(t)
		b.locale = tc.locale
		b.model.push(asks("", "ask_user", chatSingleArgs), model.Message{Content: "好"})
		out := b.chat("帮我\n9\n1\n/quit\n", tc.args...)
		for _, w := range tc.want {
			require.Contains(t, out, w, "%v:\n%s", tc.args, out)
		}
		if len(tc.args) > 0 {
			// Remove the model's and the person's own text; what is left is
			// the terminal's and must be English only.
			rest := out
			for _, own := range []string{"帮我", "请选择执行方式", "改代码之前", "先确认", "先分析", "稳妥", "直接实现", "好"} {
				rest = strings.ReplaceAll(rest, own, "")
			}
			require.False(t, hasHan(rest), "the terminal's own words are English only:\n%s", rest)
		}
	}
}
