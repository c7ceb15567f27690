package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"

	"github.com/lubanhq/luban/api"
)

// showApproval prints an approval card (docs/design.md §10): the tool, its
// description and the model's arguments, indented JSON, escaped.
func (s *chatSession) showApproval(req *api.InputRequest, lang chatLang) {
	s.printf("? %s %s\n", lang.pick("需要批准：", "approval needed:"), safeLine(req.ToolName))
	s.indent(req.Description, "  ")
	s.indent(prettyJSON(req.Arguments), "    ")
	s.printf("  %s\n", lang.pick(
		"a 批准 · a! 批准并在本会话内总是允许 · e 修改参数 · r 拒绝 · /cancel 取消任务 · /quit 稍后再答",
		"a approve · a! approve and always allow in this session · e edit the arguments · r reject · /cancel stop the task · /quit answer later"))
}

func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// collectApproval reads a decision: approve (a, or a! to remember it for the
// session), edit (the arguments in $VISUAL/$EDITOR when stdin is a terminal
// and one is set, else one line of JSON), or reject with an optional reason.
// The edit is checked to be a JSON object here; the server checks it
// against the tool's schema and its 422 details lead back here.
func (s *chatSession) collectApproval(ctx context.Context, req *api.InputRequest, lang chatLang) (api.ContinueRequest, error) {
	for {
		l, err := s.line(ctx, lang.pick("决定 [a/a!/e/r]: ", "decision [a/a!/e/r]: "))
		if err != nil {
			return api.ContinueRequest{}, err
		}
		switch strings.TrimSpace(l) {
		case "a", "approve", "y", "yes":
			return api.ContinueRequest{Decision: api.DecisionApprove}, nil
		case "a!", "always":
			return api.ContinueRequest{Decision: api.DecisionApprove, Remember: api.RememberSession}, nil
		case "e", "edit":
			args, err := s.editArguments(ctx, req, lang)
			if err != nil {
				return api.ContinueRequest{}, err
			}
			if args == nil {
				continue
			}
			return api.ContinueRequest{Decision: api.DecisionEdit, Arguments: args}, nil
		case "r", "reject", "n", "no":
			msg, err := s.line(ctx, lang.pick("理由（可选，直接回车跳过）: ", "reason (optional, Enter to skip): "))
			if err != nil {
				return api.ContinueRequest{}, err
			}
			return api.ContinueRequest{Decision: api.DecisionReject, Message: strings.TrimSpace(msg)}, nil
		default:
			s.printf("  ! %s\n", lang.pick("请输入 a、a!、e 或 r", "type a, a!, e or r"))
		}
	}
}

// editArguments returns the edited arguments, or nil (after saying why)
// when they are not a JSON object, so the decision is asked again.
func (s *chatSession) editArguments(ctx context.Context, req *api.InputRequest, lang chatLang) (json.RawMessage, error) {
	var text string
	if s.editor != "" {
		// The editor has the terminal: an answer elsewhere does not kill
		// it; it is seen when the editor exits.
		edited, err := runEditor(s.root, s.editor, prettyJSON(req.Arguments)+"\n")
		if err != nil {
			s.printf("  ! %s: %s\n", lang.pick("编辑器失败", "the editor failed"), safeLine(err.Error()))
			return nil, nil
		}
		text = edited
	} else {
		l, err := s.line(ctx, lang.pick("新参数（一行 JSON）: ", "new arguments (one line of JSON): "))
		if err != nil {
			return nil, err
		}
		text = l
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || obj == nil {
		s.printf("  ! %s\n", detailText(api.FieldError{Field: "arguments", Code: api.DetailInvalidType, Params: map[string]any{"expected": "object"}}, lang))
		return nil, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		return nil, nil
	}
	return b.Bytes(), nil
}

// runEditor writes text to a temporary file, runs editor on it with the
// terminal attached, and returns what the file holds afterwards.
func runEditor(ctx context.Context, editor, text string) (string, error) {
	f, err := os.CreateTemp("", "luban-arguments-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	fields := strings.Fields(editor)
	cmd := exec.CommandContext(ctx, fields[0], append(fields[1:], f.Name())...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	b, err := os.ReadFile(f.Name())
	return string(b), err
}

// approvalReceipt prints an answered approval's receipt: the decision, the
// edited arguments, the reason of a reject.
func (s *chatSession) approvalReceipt(rc *api.Receipt, lang chatLang) {
	remember := ""
	if rc.Remember == api.RememberSession {
		remember = lang.pick("（本会话内总是允许）", " (always allowed in this session)")
	}
	switch rc.Decision {
	case api.DecisionApprove:
		s.printf("✓ %s%s\n", lang.pick("已批准", "approved"), remember)
	case api.DecisionEdit:
		s.printf("✓ %s%s\n", lang.pick("已修改参数后批准：", "approved with edited arguments: "), remember)
		s.indent(prettyJSON(rc.Arguments), "    ")
	case api.DecisionReject:
		if rc.Message != "" {
			s.printf("✗ %s%s\n", lang.pick("已拒绝：", "rejected: "), safeLine(rc.Message))
		} else {
			s.printf("✗ %s\n", lang.pick("已拒绝", "rejected"))
		}
	default:
		s.printf("✓ %s\n", safeLine(string(rc.Decision)))
	}
}
