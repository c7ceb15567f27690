package main

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
)

// chatLang is the language of everything `luban chat` prints of its own:
// prompts, hints, receipts, errors. Text that came from the model or a
// server is printed as it is.
type chatLang bool

const (
	langEN chatLang = false
	langZH chatLang = true
)

func (l chatLang) pick(zh, en string) string {
	if l == langZH {
		return zh
	}
	return en
}

// parseLang reads a --lang or LUBAN_LANG value: "zh" (also zh-CN, zh_TW.UTF-8,
// ...) or "en" (also en-US, ...), case-insensitive.
func parseLang(v string) (chatLang, error) {
	switch l := strings.ToLower(strings.TrimSpace(v)); {
	case strings.HasPrefix(l, "zh"):
		return langZH, nil
	case strings.HasPrefix(l, "en"):
		return langEN, nil
	}
	return langEN, fmt.Errorf("--lang (LUBAN_LANG) %q: use zh or en", v)
}

// localeLang is the language of the locale (LC_ALL, else LC_MESSAGES, else
// LANG, the POSIX order): Chinese for zh*, English for anything else,
// including an unset locale and C/POSIX.
func localeLang(getenv func(string) string) chatLang {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(name); v != "" {
			if strings.HasPrefix(strings.ToLower(v), "zh") {
				return langZH
			}
			return langEN
		}
	}
	return langEN
}

// langArg is the value of a --lang flag in args before they are parsed (so
// --help is already in that language); "" when there is none.
func langArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"--lang", "-lang"} {
			if v, ok := strings.CutPrefix(a, p+"="); ok {
				return v
			}
			if a == p && i+1 < len(args) {
				return args[i+1]
			}
		}
	}
	return ""
}

// runStatusText words a run's or session's status.
func runStatusText(status string, lang chatLang) string {
	switch api.RunStatus(status) {
	case api.RunRunning:
		return lang.pick("运行中", "running")
	case api.RunWaitingInput:
		return lang.pick("等待回答", "waiting for an answer")
	case api.RunCompleted:
		return lang.pick("任务已完成", "completed")
	case api.RunCancelled:
		return lang.pick("已取消", "cancelled")
	case api.RunExpired:
		return lang.pick("已超时", "expired")
	case api.RunFailed:
		return lang.pick("失败", "failed")
	case "idle":
		return lang.pick("尚未开始", "not started")
	}
	return safeLine(status)
}

// runErrorText words a failed run's error event by its code, with the
// server's message as the detail.
func runErrorText(code, message string, lang chatLang) string {
	var what string
	switch code {
	case "model_error":
		what = lang.pick("模型调用失败", "the model call failed")
	case "max_steps":
		what = lang.pick("达到了步数上限", "the run reached its step limit")
	case "invalid_tool_arguments":
		what = lang.pick("模型给出的工具参数无效", "the model sent invalid tool arguments")
	case "agent_not_found":
		what = lang.pick("找不到这个智能体", "no such agent")
	case "internal_error":
		what = lang.pick("服务内部错误", "the server failed")
	default:
		what = lang.pick("出错了", "error") + " (" + safeLine(code) + ")"
	}
	if message == "" {
		return what
	}
	return what + lang.pick("：", ": ") + safeLine(message)
}

// refusalText words a server's refusal (*client.Error) by its code; the
// server's English message is used for a code the terminal does not know.
// A transport error is worded as a lost connection.
func refusalText(err error, lang chatLang) string {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return lang.pick("连接服务失败：", "cannot reach the server: ") + safeLine(err.Error())
	}
	switch api.ErrorCode(ce.Code) {
	case api.CodeUnauthorized:
		return lang.pick("令牌无效（--token 或 LUBAN_AUTH_TOKEN）", "the token was refused (--token or LUBAN_AUTH_TOKEN)")
	case api.CodeSessionNotFound:
		return lang.pick("找不到这个会话（它不存在，或属于另一个令牌）", "no such session (it does not exist, or belongs to another token)")
	case api.CodeInteractionNotFound:
		return lang.pick("找不到这个问题", "no such question")
	case api.CodeAlreadyResolved:
		return lang.pick("这个问题已经回答过了", "this question was already answered")
	case api.CodeRunInProgress:
		return lang.pick("任务还在运行；请等它结束，或输入 /cancel", "the run is still going; wait for it, or type /cancel")
	case api.CodeInteractionPending:
		return lang.pick("有一个问题在等待回答", "a question is waiting for an answer")
	case api.CodeInteractionExpired:
		return lang.pick("这个问题已超时", "this question expired")
	case api.CodeNotResumable:
		return lang.pick("服务已重启，这一步无法继续；请重新发起任务", "the server restarted and cannot continue this step; start the task again")
	case api.CodePayloadTooLarge:
		// The details name the bound (too_long {max, got, unit}); the field
		// is what was just typed, so only the bound is said.
		what := lang.pick("内容太长", "too large")
		if len(ce.Details) > 0 {
			parts := make([]string, len(ce.Details))
			for i, d := range ce.Details {
				parts[i] = codeText(d, lang)
			}
			what += lang.pick("：", ": ") + strings.Join(parts, lang.pick("；", "; "))
		}
		return what
	case api.CodeNotAssignee:
		return lang.pick("这个问题不是交给你的", "this question is not assigned to you")
	case api.CodeInvalidDelegation:
		return lang.pick("无法转交：", "cannot hand it on: ") + safeLine(ce.Message)
	case api.CodeRequestTimeout:
		return lang.pick("请求没有及时送达", "the request did not arrive in time")
	case api.CodeInternal:
		return lang.pick("服务内部错误", "the server failed (internal error)")
	case api.CodeInvalidRequest:
		if len(ce.Details) > 0 {
			parts := make([]string, len(ce.Details))
			for i, d := range ce.Details {
				parts[i] = detailText(d, lang)
			}
			return lang.pick("请求无效：", "invalid request: ") + strings.Join(parts, lang.pick("；", "; "))
		}
	}
	return safeLine(ce.Error())
}

// detailText words one field error as "label: sentence" from its field
// path, code and params; a code it does not know is worded by the server's
// message.
func detailText(d api.FieldError, lang chatLang) string {
	sentence := codeText(d, lang)
	label := fieldLabel(d.Field, lang)
	if label == "" {
		return sentence
	}
	return label + lang.pick("：", ": ") + sentence
}

var (
	answerField = regexp.MustCompile(`^answers\[(\d+)\](?:\.(question|other|selected)(?:\[\d+\])?)?$`)
	indexSuffix = regexp.MustCompile(`\[\d+\]$`)
)

// fieldLabel is a field path as the person knows it: "choice", "answer",
// "question 2", "argument path", "field email"; a path it does not know is
// shown as it is.
func fieldLabel(field string, lang chatLang) string {
	if m := answerField.FindStringSubmatch(field); m != nil {
		n, _ := strconv.Atoi(m[1])
		q := lang.pick(fmt.Sprintf("第 %d 个问题", n+1), fmt.Sprintf("question %d", n+1))
		if m[2] == "other" {
			q += lang.pick("的“其他”", " (other)")
		}
		return q
	}
	if rest, ok := strings.CutPrefix(field, "arguments."); ok {
		return lang.pick("参数 ", "argument ") + safeLine(rest)
	}
	if rest, ok := strings.CutPrefix(field, "content."); ok {
		return lang.pick("字段 ", "field ") + safeLine(rest)
	}
	switch indexSuffix.ReplaceAllString(field, "") {
	case "":
		return ""
	case "selections":
		return lang.pick("选项", "choice")
	case "customInput":
		return lang.pick("回答", "answer")
	case "answers":
		return lang.pick("回答", "answers")
	case "decision":
		return lang.pick("决定", "decision")
	case "arguments":
		return lang.pick("参数", "arguments")
	case "message":
		return lang.pick("理由", "reason")
	case "remember":
		return lang.pick("总是允许", "remember")
	case "content":
		return lang.pick("表单", "form")
	case "requestId":
		return lang.pick("问题", "question")
	}
	return safeLine(field)
}

// codeText is the sentence of a field error's code and params.
func codeText(d api.FieldError, lang chatLang) string {
	p := d.Params
	str := func(k string) string { s, _ := p[k].(string); return safeLine(s) }
	num := func(k string) (string, bool) { return paramNumber(p[k]) }
	count := func(k string) string { n, _ := num(k); return n }
	switch d.Code {
	case api.DetailRequired:
		if q := str("question"); q != "" {
			return lang.pick("还没有回答问题「"+q+"」", `question "`+q+`" has no answer yet`)
		}
		return lang.pick("必填", "required")
	case api.DetailUnknownField:
		return lang.pick("没有这个字段", "no such field")
	case api.DetailInvalidType:
		t := str("expected")
		if d.Field == "" {
			return lang.pick("请求体应为 JSON "+typeWord(t, lang), "the body must be a JSON "+typeWord(t, lang))
		}
		return lang.pick("应为"+typeWord(t, lang), "must be "+enType(t))
	case api.DetailInvalidJSON:
		return lang.pick("不是有效的 JSON", "not valid JSON")
	case api.DetailTooFew:
		if str("unit") == "" { // a count of options
			return lang.pick("至少选择 "+count("min")+" 项", "choose at least "+count("min"))
		}
		return lang.pick("至少 "+count("min")+" "+unitWord(str("unit"), lang), "at least "+count("min")+" "+unitWord(str("unit"), lang))
	case api.DetailTooMany:
		if str("unit") == "" {
			return lang.pick("最多选择 "+count("max")+" 项", "choose at most "+count("max"))
		}
		return lang.pick("最多 "+count("max")+" "+unitWord(str("unit"), lang), "at most "+count("max")+" "+unitWord(str("unit"), lang))
	case api.DetailUnknownOption:
		return lang.pick("没有选项「"+str("option")+"」", `there is no option "`+str("option")+`"`)
	case api.DetailUnknownQuestion:
		return lang.pick("没有问题「"+str("question")+"」", `there is no question "`+str("question")+`"`)
	case api.DetailDuplicate:
		if o := str("option"); o != "" {
			return lang.pick("「"+o+"」选了两次", `"`+o+`" is chosen twice`)
		}
		if q := str("question"); q != "" {
			return lang.pick("问题「"+q+"」回答了两次", `question "`+q+`" is answered twice`)
		}
		return lang.pick("有重复", "has duplicates")
	case api.DetailTooLong:
		s := lang.pick("最多 "+count("max")+" "+unitWord(str("unit"), lang), "at most "+count("max")+" "+unitWord(str("unit"), lang))
		if g, ok := num("got"); ok {
			s += lang.pick("（现在 "+g+"）", " (now "+g+")")
		}
		return s
	case api.DetailTooShort:
		return lang.pick("至少 "+count("min")+" "+unitWord(str("unit"), lang), "at least "+count("min")+" "+unitWord(str("unit"), lang))
	case api.DetailOutOfRange:
		var parts []string
		if v, ok := num("min"); ok {
			parts = append(parts, lang.pick("不能小于 "+v, "at least "+v))
		}
		if v, ok := num("exclusiveMin"); ok {
			parts = append(parts, lang.pick("必须大于 "+v, "more than "+v))
		}
		if v, ok := num("max"); ok {
			parts = append(parts, lang.pick("不能大于 "+v, "at most "+v))
		}
		if v, ok := num("exclusiveMax"); ok {
			parts = append(parts, lang.pick("必须小于 "+v, "less than "+v))
		}
		if len(parts) == 0 {
			return lang.pick("数字超出范围", "the number is out of range")
		}
		return strings.Join(parts, lang.pick("，", ", "))
	case api.DetailNotMultiple:
		return lang.pick("必须是 "+count("multipleOf")+" 的倍数", "must be a multiple of "+count("multipleOf"))
	case api.DetailPattern:
		return lang.pick("格式不符（"+str("pattern")+"）", "does not match "+str("pattern"))
	case api.DetailFormat:
		switch f := str("format"); f {
		case "number":
			return lang.pick("请输入完整的数字（如 42、-3.5、1e3）", "enter a number written in full (like 42, -3.5 or 1e3)")
		case "date":
			return lang.pick("不是有效的日期（YYYY-MM-DD）", "not a real date (YYYY-MM-DD)")
		case "email":
			return lang.pick("不是有效的邮箱地址", "not an e-mail address")
		case "uri":
			return lang.pick("不是有效的网址", "not a URL")
		case "date-time":
			return lang.pick("不是有效的日期时间", "not a date and time")
		default:
			return lang.pick("格式不对（"+f+"）", "not a valid "+f)
		}
	case api.DetailEnum:
		return lang.pick("只能是 "+allowedList(p["allowed"], "、"), "must be one of "+allowedList(p["allowed"], ", "))
	case api.DetailNotAllowed:
		return lang.pick("这里不能填写", "not allowed here")
	case api.DetailConflictWithKind:
		return lang.pick("不属于这类问题的回答", "does not belong to this kind of question")
	case api.DetailNoQuestion:
		return lang.pick("没有待回答的问题", "there is no question to answer")
	case api.DetailOutsideWorkspace:
		return lang.pick("「"+str("path")+"」在工作区之外", `"`+str("path")+`" is outside the workspace`)
	case api.DetailNoWorkspace:
		return lang.pick("服务没有配置工作区（--workspace）", "the server has no workspace (--workspace)")
	case api.DetailNotDirectory:
		return lang.pick("「"+str("path")+"」不是目录", `"`+str("path")+`" is not a directory`)
	case api.DetailIsDirectory:
		return lang.pick("「"+str("path")+"」是目录，不是文件", `"`+str("path")+`" is a directory, not a file`)
	case api.DetailInvalidPath:
		return lang.pick("「"+str("path")+"」不是可用的路径", `"`+str("path")+`" cannot be used as a path`)
	}
	return safeLine(d.Message)
}

// paramNumber formats a numeric param (an int from a local check, a
// float64 from JSON).
func paramNumber(v any) (string, bool) {
	switch n := v.(type) {
	case int:
		return strconv.Itoa(n), true
	case int64:
		return strconv.FormatInt(n, 10), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return "", false
		}
		return strconv.FormatFloat(n, 'f', -1, 64), true
	}
	return "", false
}

func typeWord(t string, lang chatLang) string {
	switch t {
	case "object":
		return lang.pick("对象", "object")
	case "array":
		return lang.pick("列表", "array")
	case "string":
		return lang.pick("文本", "text")
	case "number":
		return lang.pick("数字", "number")
	case "integer":
		return lang.pick("整数", "integer")
	case "boolean":
		return lang.pick("是或否", "true or false")
	}
	return lang.pick("其他类型", "another type")
}

// unitWord is what min, max and got count.
func unitWord(unit string, lang chatLang) string {
	switch unit {
	case "characters":
		return lang.pick("个字", "characters")
	case "bytes":
		return lang.pick("字节", "bytes")
	case "items":
		return lang.pick("项", "items")
	case "properties":
		return lang.pick("个字段", "fields")
	}
	return ""
}

func allowedList(v any, sep string) string {
	var out []string
	switch l := v.(type) {
	case []string:
		for _, s := range l {
			out = append(out, safeLine(s))
		}
	case []any:
		for _, e := range l {
			out = append(out, safeLine(fmt.Sprint(e)))
		}
	}
	return strings.Join(out, sep)
}

// enType is a JSON type as an English noun phrase after "must be".
func enType(t string) string {
	switch t {
	case "object", "array", "integer":
		return "an " + t
	case "string":
		return "text"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	}
	return "another type"
}
