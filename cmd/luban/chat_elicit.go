package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/lubanhq/luban/api"
)

// showElicitation prints an MCP server's elicitation card (docs/design.md §11):
// the server's message and name, then for a form every field with its
// type, required mark, bounds and default, for a URL the full URL and its
// host on a line of its own. Nothing is ever opened from here.
func (s *chatSession) showElicitation(req *api.InputRequest, lang chatLang) {
	s.printf("? %s\n", safeLine(req.Title))
	if req.Server != "" {
		s.printf("  %s %s\n", lang.pick("来自 MCP 服务", "from MCP server"), safeLine(req.Server))
	}
	if req.Mode == api.ModeURL {
		s.printf("  %s %s\n", lang.pick("网址：", "URL:"), safeLine(req.URL))
		if u, err := url.Parse(req.URL); err == nil && u.Host != "" {
			s.printf("  %s >>> %s <<<\n", lang.pick("网站：", "host:"), safeLine(asciiHost(u.Hostname()))+portOf(u))
		}
		s.printf("  %s\n", lang.pick(
			"请自己在浏览器中打开这个网址；luban 不会替你打开。d 完成 · n 拒绝 · /cancel 取消 · /quit 稍后再答",
			"Open the address in your browser yourself; luban never opens it. d done · n decline · /cancel cancel · /quit answer later"))
		return
	}
	for i, f := range req.Fields {
		s.printf("  %d. %s\n", i+1, fieldLine(f, lang))
		s.indent(f.Description, "     ")
	}
	s.printf("  %s\n", lang.pick(
		"逐项填写；直接回车用默认值或跳过选填项。/decline 拒绝 · /cancel 取消 · /quit 稍后再答",
		"Fill in each field; Enter keeps the default or skips an optional one. /decline to decline · /cancel to cancel · /quit to answer later"))
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return ":" + p
	}
	return ""
}

// fieldLine is one field as the card lists it: "Name * (string, 2–20
// characters, default: Ada)".
func fieldLine(f api.FormField, lang chatLang) string {
	title := f.Title
	if title == "" {
		title = f.Name
	}
	line := safeLine(title)
	if f.Required {
		line += " *"
	}
	info := []string{fieldTypeText(f.Type, lang)}
	if b := boundsOf(f, lang); b != "" {
		info = append(info, b)
	}
	if f.Format != "" && f.Type == api.FieldString {
		info = append(info, f.Format)
	}
	if len(f.Default) > 0 && string(f.Default) != "null" {
		info = append(info, lang.pick("默认：", "default: ")+safeLine(string(f.Default)))
	}
	return line + " (" + strings.Join(info, ", ") + ")"
}

// fieldTypeText words a form field's type.
func fieldTypeText(t api.FieldType, lang chatLang) string {
	switch t {
	case api.FieldString:
		return lang.pick("文本", "text")
	case api.FieldNumber:
		return lang.pick("数字", "number")
	case api.FieldInteger:
		return lang.pick("整数", "integer")
	case api.FieldBoolean:
		return lang.pick("是/否", "yes/no")
	case api.FieldDate:
		return lang.pick("日期", "date")
	case api.FieldEnum:
		return lang.pick("单选", "one of")
	case api.FieldMulti:
		return lang.pick("多选", "several of")
	}
	return safeLine(string(t))
}

func boundsOf(f api.FormField, lang chatLang) string {
	rng := func(lo, hi *float64) string {
		num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
		switch {
		case lo != nil && hi != nil:
			return num(*lo) + "–" + num(*hi)
		case lo != nil:
			return "≥ " + num(*lo)
		case hi != nil:
			return "≤ " + num(*hi)
		}
		return ""
	}
	fl := func(p *int) *float64 {
		if p == nil {
			return nil
		}
		v := float64(*p)
		return &v
	}
	switch f.Type {
	case api.FieldNumber, api.FieldInteger:
		return rng(f.Minimum, f.Maximum)
	case api.FieldString:
		if r := rng(fl(f.MinLength), fl(f.MaxLength)); r != "" {
			return r + lang.pick(" 个字", " characters")
		}
	case api.FieldMulti:
		if r := rng(fl(f.MinItems), fl(f.MaxItems)); r != "" {
			return lang.pick("选 "+r+" 项", "choose "+r)
		}
	}
	return ""
}

// collectElicitation reads the answer to an elicitation: for a URL, done
// (accept) or decline; for a form, each field in turn, checked here (type,
// required, bounds, options) before the next, then sent as accept with the
// content. /decline at any prompt declines; /cancel cancels (errCancel).
func (s *chatSession) collectElicitation(ctx context.Context, req *api.InputRequest, lang chatLang) (api.ContinueRequest, error) {
	decline := api.ContinueRequest{Decision: api.DecisionDecline}
	if req.Mode == api.ModeURL {
		for {
			l, err := s.line(ctx, lang.pick("完成了吗 [d 完成 / n 拒绝]: ", "done? [d done / n decline]: "))
			if err != nil {
				return api.ContinueRequest{}, err
			}
			switch strings.ToLower(strings.TrimSpace(l)) {
			case "d", "done", "y", "yes", "a", "accept":
				return api.ContinueRequest{Decision: api.DecisionAccept}, nil
			case "n", "no", "decline", "/decline":
				return decline, nil
			}
			s.printf("  ! %s\n", lang.pick("请输入 d 或 n", "type d or n"))
		}
	}
	content := map[string]any{}
	for _, f := range req.Fields {
		for {
			l, err := s.line(ctx, fieldPrompt(f, lang))
			if err != nil {
				return api.ContinueRequest{}, err
			}
			if strings.TrimSpace(l) == "/decline" {
				return decline, nil
			}
			v, set, msg := fieldValue(f, strings.TrimSpace(l), lang)
			if msg != "" {
				s.printf("  ! %s\n", msg)
				continue
			}
			if set {
				content[f.Name] = v
			}
			break
		}
	}
	b, err := json.Marshal(content)
	if err != nil {
		return api.ContinueRequest{}, err
	}
	return api.ContinueRequest{Decision: api.DecisionAccept, Content: b}, nil
}

func fieldPrompt(f api.FormField, lang chatLang) string {
	title := f.Title
	if title == "" {
		title = f.Name
	}
	p := safeLine(title)
	if f.Required {
		p += " *"
	}
	switch f.Type {
	case api.FieldBoolean:
		p += " [y/n]"
	case api.FieldEnum, api.FieldMulti:
		opts := make([]string, len(f.Options))
		for i, o := range f.Options {
			opts[i] = fmt.Sprintf("%d) %s", i+1, safeLine(o.Label))
		}
		p += " [" + strings.Join(opts, " ") + "]"
		if f.Type == api.FieldMulti {
			p += lang.pick("（多选，用逗号分隔）", " (several: comma-separated)")
		}
	case api.FieldDate:
		p += " [YYYY-MM-DD]"
	}
	return p + ": "
}

var dateRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// fieldValue parses one typed line for f: the value, whether it goes into
// the content (an empty optional line does not; an empty line with a
// default takes the default), or what is wrong.
func fieldValue(f api.FormField, in string, lang chatLang) (any, bool, string) {
	if in == "" {
		if len(f.Default) > 0 && string(f.Default) != "null" {
			var d any
			if json.Unmarshal(f.Default, &d) == nil {
				return d, true, ""
			}
		}
		if f.Type == api.FieldBoolean {
			return false, true, ""
		}
		if f.Required {
			return nil, false, lang.pick("这一项必填", "this field is required")
		}
		return nil, false, ""
	}
	switch f.Type {
	case api.FieldBoolean:
		switch strings.ToLower(in) {
		case "y", "yes", "true", "1", "是":
			return true, true, ""
		case "n", "no", "false", "0", "否":
			return false, true, ""
		}
		return nil, false, lang.pick("请输入 y 或 n", "type y or n")
	case api.FieldNumber, api.FieldInteger:
		n, err := strconv.ParseFloat(in, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, false, lang.pick("请输入数字", "enter a number")
		}
		if f.Type == api.FieldInteger && n != math.Trunc(n) {
			return nil, false, lang.pick("请输入整数", "enter a whole number")
		}
		if f.Minimum != nil && n < *f.Minimum {
			return nil, false, lang.pick("不能小于 ", "at least ") + strconv.FormatFloat(*f.Minimum, 'f', -1, 64)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return nil, false, lang.pick("不能大于 ", "at most ") + strconv.FormatFloat(*f.Maximum, 'f', -1, 64)
		}
		if f.Type == api.FieldInteger {
			return int64(n), true, ""
		}
		if n == 0 {
			n = 0 // -0 is sent as 0, as the server would store it
		}
		return n, true, ""
	case api.FieldDate:
		if !dateRE.MatchString(in) {
			return nil, false, lang.pick("请按 YYYY-MM-DD 输入日期", "enter a date as YYYY-MM-DD")
		}
		return in, true, ""
	case api.FieldEnum:
		o, msg := pickOption(f, in, lang)
		if msg != "" {
			return nil, false, msg
		}
		return o, true, ""
	case api.FieldMulti:
		var vals []string
		for _, part := range strings.Split(in, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			o, msg := pickOption(f, part, lang)
			if msg != "" {
				return nil, false, msg
			}
			vals = append(vals, o)
		}
		if f.MinItems != nil && len(vals) < *f.MinItems {
			return nil, false, lang.pick(fmt.Sprintf("至少选 %d 项", *f.MinItems), fmt.Sprintf("choose at least %d", *f.MinItems))
		}
		if f.MaxItems != nil && len(vals) > *f.MaxItems {
			return nil, false, lang.pick(fmt.Sprintf("最多选 %d 项", *f.MaxItems), fmt.Sprintf("choose at most %d", *f.MaxItems))
		}
		return vals, true, ""
	}
	n := utf8.RuneCountInString(in)
	if f.MinLength != nil && n < *f.MinLength {
		return nil, false, lang.pick(fmt.Sprintf("至少 %d 个字", *f.MinLength), fmt.Sprintf("at least %d characters", *f.MinLength))
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, false, lang.pick(fmt.Sprintf("最多 %d 个字", *f.MaxLength), fmt.Sprintf("at most %d characters", *f.MaxLength))
	}
	return in, true, ""
}

// pickOption is the option value a typed number (1-based) or value names.
func pickOption(f api.FormField, in string, lang chatLang) (string, string) {
	if i, err := strconv.Atoi(in); err == nil && i >= 1 && i <= len(f.Options) {
		return f.Options[i-1].Value, ""
	}
	for _, o := range f.Options {
		if o.Value == in || o.Label == in {
			return o.Value, ""
		}
	}
	return "", lang.pick(fmt.Sprintf("请输入 1-%d 之间的编号", len(f.Options)), fmt.Sprintf("type a number from 1 to %d", len(f.Options)))
}

// elicitationReceipt prints the receipt of an elicitation: accepted with
// the values sent, done at the URL, or declined.
func (s *chatSession) elicitationReceipt(rc *api.Receipt, req *api.InputRequest, lang chatLang) {
	if rc.Status == api.StatusNotResumable {
		s.printf("✗ %s\n", lang.pick("服务已重启，这个问题无法再回答", "luban restarted; this question can no longer be answered"))
		return
	}
	if rc.Decision == api.DecisionDecline {
		s.printf("✗ %s\n", lang.pick("已拒绝", "declined"))
		return
	}
	if req != nil && req.Mode == api.ModeURL {
		s.printf("✓ %s\n", lang.pick("已完成网址操作", "done at the address"))
		return
	}
	s.printf("✓ %s\n", lang.pick("已提交：", "submitted:"))
	var content map[string]json.RawMessage
	if json.Unmarshal(rc.Content, &content) != nil {
		return
	}
	for _, f := range fieldsOf(req) {
		if v, ok := content[f.Name]; ok {
			title := f.Title
			if title == "" {
				title = f.Name
			}
			s.printf("  %s: %s\n", safeLine(title), safeLine(string(v)))
			delete(content, f.Name)
		}
	}
	for k, v := range content {
		s.printf("  %s: %s\n", safeLine(k), safeLine(string(v)))
	}
}

func fieldsOf(req *api.InputRequest) []api.FormField {
	if req == nil {
		return nil
	}
	return req.Fields
}

// asciiHost is host as the browser resolves it: an international name in
// its punycode form (xn--…), so letters that look alike cannot pass for
// another site; a host that does not convert is shown as it is.
func asciiHost(host string) string {
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		return a
	}
	return host
}
