package scripted_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/demomcp"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/scripted"
)

type testBundle struct {
	ctx context.Context
	p   *scripted.Provider
}

const twoTurns = `{
  "name": "two",
  "turns": [
    {"text": "first", "toolCalls": [
      {"name": "ask_user", "arguments": {"title": "A?", "mode": "text"}},
      {"name": "ask_user", "arguments": {"title": "B?", "mode": "number"}}
    ]},
    {"toolCalls": [{"name": "lookup"}]}
  ],
  "final": "结果 (results):\n{{results}}"
}`

func setup(t *testing.T) *testBundle {
	t.Helper()
	s, err := scripted.Parse([]byte(twoTurns))
	require.NoError(t, err)
	return &testBundle{ctx: context.Background(), p: scripted.New(s)}
}

func (b *testBundle) gen(t *testing.T, msgs []model.Message) *model.Response {
	t.Helper()
	resp, err := b.p.Generate(b.ctx, &model.Request{Messages: msgs}, nil)
	require.NoError(t, err)
	return resp
}

// conversation plays the scenario to its end after one user message,
// answering every tool call with result(call).
func conversation(t *testing.T, b *testBundle, prior []model.Message, result func(model.ToolCall) string) ([]model.Message, []*model.Response) {
	t.Helper()
	return conversationOf(t, b, prior, func(c model.ToolCall) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: result(c)}
	})
}

// conversationOf is conversation with whole tool messages (IsError too).
func conversationOf(t *testing.T, b *testBundle, prior []model.Message, result func(model.ToolCall) model.Message) ([]model.Message, []*model.Response) {
	t.Helper()
	msgs := append(prior, model.Message{Role: model.RoleUser, Content: "go"})
	var resps []*model.Response
	for range 20 {
		r := b.gen(t, msgs)
		resps = append(resps, r)
		msgs = append(msgs, r.Message)
		if len(r.Message.ToolCalls) == 0 {
			return msgs, resps
		}
		for _, c := range r.Message.ToolCalls {
			msgs = append(msgs, result(c))
		}
	}
	t.Fatal("scenario did not end")
	return nil, nil
}

func TestTurnSelectionAndIDs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, "scripted:two", b.p.Name())
	msgs, resps := conversation(t, b, []model.Message{{Role: model.RoleSystem, Content: "sys"}}, func(c model.ToolCall) string {
		if c.Name == "lookup" {
			return "found it\nline two"
		}
		return `{"selections":[],"customInput":"你好","cancelled":false}`
	})
	require.Len(t, resps, 3)
	require.Equal(t, "first", resps[0].Message.Content)
	require.Equal(t, "tool_calls", resps[0].FinishReason)
	require.Equal(t, []model.ToolCall{
		{ID: "call_1_0_0", Name: "ask_user", Arguments: `{"title":"A?","mode":"text"}`},
		{ID: "call_1_0_1", Name: "ask_user", Arguments: `{"title":"B?","mode":"number"}`},
	}, resps[0].Message.ToolCalls)
	require.Equal(t, []model.ToolCall{{ID: "call_1_1_0", Name: "lookup", Arguments: `{}`}}, resps[1].Message.ToolCalls)
	require.Equal(t, "stop", resps[2].FinishReason)
	require.Equal(t, "结果 (results):\n- ask_user: “你好”\n- ask_user: “你好”\n- lookup: found it; line two", resps[2].Message.Content)

	// Past the last turn it keeps playing Final.
	again := b.gen(t, append(msgs, model.Message{Role: model.RoleAssistant, Content: "x"}))
	require.Empty(t, again.Message.ToolCalls)
	require.True(t, strings.HasPrefix(again.Message.Content, "结果"))

	// A second user message starts the scenario again with new, unique ids.
	_, resps2 := conversation(t, b, msgs, func(model.ToolCall) string { return "{}" })
	require.Equal(t, "call_8_0_0", resps2[0].Message.ToolCalls[0].ID)
	seen := map[string]bool{}
	for _, r := range append(resps, resps2...) {
		for _, c := range r.Message.ToolCalls {
			require.False(t, seen[c.ID], "duplicate id %s", c.ID)
			seen[c.ID] = true
		}
	}
}

// {{lastResults}} lists the previous turn's results only; in the first
// turn after a user message there are none.
func TestLastResults(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"name": "last", "turns": [
	  {"text": "before: {{lastResults}}", "toolCalls": [{"name": "lookup"}, {"name": "fetch"}]},
	  {"text": "then: {{lastResults}}", "toolCalls": [{"name": "write"}]}
	], "final": "last:\n{{lastResults}}\nall:\n{{results}}"}`))
	require.NoError(t, err)
	b := &testBundle{ctx: context.Background(), p: scripted.New(s)}
	_, resps := conversation(t, b, nil, func(c model.ToolCall) string { return c.Name + " done" })
	require.Len(t, resps, 3)
	require.Equal(t, "before: （没有工具结果 / no tool results）", resps[0].Message.Content)
	require.Equal(t, "then: - lookup: lookup done\n- fetch: fetch done", resps[1].Message.Content)
	require.Equal(t, "last:\n- write: write done\nall:\n- lookup: lookup done\n- fetch: fetch done\n- write: write done", resps[2].Message.Content)
}

// FinalOnError is played instead of Final when a result of the last turn's
// tool calls is an error, Final otherwise; an error in an earlier turn does
// not count.
func TestFinalOnError(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"name":"f","turns":[
	  {"toolCalls": [{"name": "lookup"}]},
	  {"toolCalls": [{"name": "write"}, {"name": "note"}]}
	], "final": "ok:\n{{lastResults}}", "finalOnError": "not written:\n{{lastResults}}"}`))
	require.NoError(t, err)
	b := &testBundle{ctx: context.Background(), p: scripted.New(s)}
	play := func(failing string) string {
		msgs, _ := conversationOf(t, b, nil, func(c model.ToolCall) model.Message {
			m := model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: c.Name + " done"}
			if c.Name == failing {
				m.Content, m.IsError = "declined", true
			}
			return m
		})
		return msgs[len(msgs)-1].Content
	}
	require.Equal(t, "ok:\n- write: write done\n- note: note done", play(""))
	require.Equal(t, "ok:\n- write: write done\n- note: note done", play("lookup"))
	require.Equal(t, "not written:\n- write: 出错 (error): declined\n- note: note done", play("write"))

	s, err = scripted.Parse([]byte(`{"name":"g","turns":[{"toolCalls":[{"name":"write"}]}],"final":"ok"}`))
	require.NoError(t, err)
	b = &testBundle{ctx: context.Background(), p: scripted.New(s)}
	msgs, _ := conversationOf(t, b, nil, func(c model.ToolCall) model.Message {
		return model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: "declined", IsError: true}
	})
	require.Equal(t, "ok", msgs[len(msgs)-1].Content, "without finalOnError, final whatever the results")
}

func TestRestartSafe(t *testing.T) {
	t.Parallel()
	b := setup(t)
	msgs := []model.Message{
		{Role: model.RoleUser, Content: "go"},
		{Role: model.RoleAssistant, Content: "first", ToolCalls: []model.ToolCall{{ID: "call_0_0_0", Name: "ask_user"}}},
		{Role: model.RoleTool, ToolCallID: "call_0_0_0", Content: `{"selections":["a"],"labels":["Alpha"],"customInput":"","cancelled":false}`},
	}
	r1 := b.gen(t, msgs)
	// A new provider from the same file (a restarted server) answers the same.
	s, err := scripted.Parse([]byte(twoTurns))
	require.NoError(t, err)
	r2, err := scripted.New(s).Generate(b.ctx, &model.Request{Messages: msgs}, nil)
	require.NoError(t, err)
	require.Equal(t, r1, r2)
	require.Equal(t, "call_0_1_0", r1.Message.ToolCalls[0].ID)
}

func TestResultsSummaries(t *testing.T) {
	t.Parallel()
	got := scripted.Results([]model.Message{
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "ask_user"}, {ID: "c2", Name: "ask_user"}, {ID: "c3", Name: "x"}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: `{"selections":["staging","prod"],"labels":["预发布","生产"],"customInput":"灰度","cancelled":false}`},
		{Role: model.RoleTool, ToolCallID: "c2", Content: `{"selections":[],"customInput":"","cancelled":true}`},
		{Role: model.RoleTool, ToolCallID: "c3", Content: "boom", IsError: true},
	})
	require.Equal(t, "- ask_user: 预发布 (staging), 生产 (prod), “灰度”\n- ask_user: 已取消 (cancelled)\n- x: 出错 (error): boom", got)
	require.Contains(t, scripted.Results(nil), "no tool results")
}

func TestDeltasInPieces(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var deltas []string
	resp, err := b.p.Generate(b.ctx, &model.Request{Messages: []model.Message{
		{Role: model.RoleUser, Content: "go"},
		{Role: model.RoleAssistant}, {Role: model.RoleAssistant},
	}}, func(s string) { deltas = append(deltas, s) })
	require.NoError(t, err)
	require.Greater(t, len(deltas), 1)
	for _, d := range deltas {
		require.True(t, utf8.ValidString(d))
	}
	require.Equal(t, resp.Message.Content, strings.Join(deltas, ""))
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err := b.p.Generate(ctx, &model.Request{}, nil)
	require.ErrorIs(t, err, context.Canceled)
}

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not json":      `{`,
		"unknown field": `{"name":"x","final":"f","turnz":[]}`,
		"no name":       `{"final":"f"}`,
		"empty":         `{"name":"x"}`,
		"empty turn":    `{"name":"x","turns":[{}]}`,
		"nameless call": `{"name":"x","turns":[{"toolCalls":[{"arguments":{}}]}]}`,
	} {
		_, err := scripted.Parse([]byte(doc))
		require.Error(t, err, name)
	}
}

func TestLoadNamesFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "onboarding.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"final":"hi"}`), 0o600))
	s, err := scripted.Load(path)
	require.NoError(t, err)
	require.Equal(t, "onboarding", s.Name)
	require.Equal(t, "scripted:onboarding", scripted.New(s).Name())

	_, err = scripted.Load(filepath.Join(dir, "missing.json"))
	require.Error(t, err)
}

// TestDemo checks the built-in demo: it parses, covers every ask_user mode
// and an AskUser batch of two questions with a preview, asks twice in one
// turn, every ask's arguments pass askuser.ParseArgs, it calls the demo MCP
// server's plan_rollout once and says what came back, and it writes two
// files in one turn (a batch of two approvals, docs/design.md §32).
func TestDemo(t *testing.T) {
	t.Parallel()
	s := scripted.Demo()
	require.Equal(t, "scripted:demo", scripted.New(s).Name())

	modes := map[api.Mode]bool{}
	twoAsksInOneTurn, recommended, customMultiple, preview := false, false, false, false
	writes, mcpCalls, writeTurns := 0, 0, 0
	for k, turn := range s.Turns {
		asks, turnWrites := 0, 0
		for i, c := range turn.ToolCalls {
			if c.Name == "write_file" {
				// The demo's last step writes two files under approval
				// (docs/design.md §10), asked together (§32).
				writes++
				turnWrites++
				continue
			}
			if c.Name == demoTool {
				// The demo MCP server's form (docs/design.md §11).
				mcpCalls++
				require.JSONEq(t, `{}`, string(c.Arguments))
				require.Contains(t, s.Turns[k+1].Text, scripted.LastResultsPlaceholder, "the next turn says what came back")
				continue
			}
			require.True(t, askuser.IsAskTool(c.Name), "turns[%d].toolCalls[%d]", k, i)
			asks++
			p, err := askuser.ParseArgs(c.Name, string(c.Arguments))
			require.NoError(t, err, "turns[%d].toolCalls[%d]: %s", k, i, c.Arguments)
			modes[p.Mode] = true
			for _, o := range p.Options {
				recommended = recommended || (p.Mode == api.ModeSingle && o.Recommended)
			}
			customMultiple = customMultiple || (p.Mode == api.ModeMultiple && p.AllowCustom)
			if p.Mode == api.ModeQuestions {
				require.Len(t, p.Questions, 2)
				for _, q := range p.Questions {
					for _, o := range q.Options {
						preview = preview || o.Preview != ""
					}
				}
			}
		}
		twoAsksInOneTurn = twoAsksInOneTurn || asks >= 2
		if turnWrites > 0 {
			writeTurns++
		}
	}
	for _, m := range []api.Mode{api.ModeSingle, api.ModeMultiple, api.ModeToggle, api.ModeText,
		api.ModeNumber, api.ModeDate, api.ModeDirectory, api.ModeQuestions} {
		require.True(t, modes[m], "demo lacks mode %s", m)
	}
	require.True(t, twoAsksInOneTurn)
	require.Equal(t, 2, writes, "two write_file calls under approval")
	require.Equal(t, 1, writeTurns, "in one turn: a batch of two approvals")
	require.Equal(t, 1, mcpCalls, "one call of the demo MCP server")
	require.True(t, recommended)
	require.True(t, customMultiple)
	require.True(t, preview)
	require.Contains(t, s.Final, scripted.ResultsPlaceholder)

	// Played through, the final summary names what the user chose.
	b := &testBundle{ctx: context.Background(), p: scripted.New(s)}
	// The edited arguments as the server stores them: JSON with <, > and &
	// escaped.
	edited, err := json.Marshal(map[string]string{"path": "luban-demo/deploy-plan.md", "content": "# edited plan\n<script>alert(1)</script>\n"})
	require.NoError(t, err)
	require.Contains(t, string(edited), `\u003cscript\u003e`)
	written := approval.EditedResult(&api.Prompt{ToolName: "write_file"}, edited, api.ToolResult{Content: "wrote 40 bytes to luban-demo/deploy-plan.md"}).Content
	msgs, resps := conversation(t, b, nil, func(c model.ToolCall) string {
		switch c.Name {
		case api.ToolAskUserBatch:
			return "The user answered your questions:\n1. 使用哪个数据库？\n   Selected: \"PostgreSQL\"\nContinue the task with these answers."
		case "write_file":
			return written
		case demoTool:
			return demomcp.Plan(map[string]any{"regions": []any{"cn-east"}, "window": "tonight", "canary": 10, "rollback": true})
		}
		return `{"selections":["staging"],"labels":["预发布 (Staging)"],"customInput":"","cancelled":false}`
	})
	require.Len(t, resps, len(s.Turns)+1)
	final := msgs[len(msgs)-1].Content
	require.Contains(t, final, "预发布 (Staging) (staging)")
	require.Contains(t, final, "- AskUser: 1. 使用哪个数据库？; Selected: \"PostgreSQL\"\n")
	require.Contains(t, final, `content “# edited plan; <script>alert(1)</script>”, path “luban-demo/deploy-plan.md”; Result: wrote 40 bytes`)
	require.NotContains(t, final, `\u003c`, "answers are quoted as text, not JSON-escaped")
	require.NotContains(t, final, "Continue the task")
	plan := "- demo__plan_rollout: 上线计划 (Rollout plan): 区域 (regions) 华东 (East China); 窗口 (window) 今晚 22:00 (tonight 22:00); 灰度 (canary) 10%"
	require.Contains(t, final, plan)
	var write string
	for _, r := range resps {
		if len(r.Message.ToolCalls) > 0 && r.Message.ToolCalls[0].Name == "write_file" {
			write = r.Message.Content
		}
	}
	require.True(t, strings.HasPrefix(write, "MCP 服务器 demo 答复 (The MCP server demo answered):\n"+plan), write)
	require.NotContains(t, write, "ask_user", "only the MCP server's answer")
	require.Contains(t, final, "全部完成")

	// A rejected write ends with what did not happen, not "All done!".
	rejected := approval.RejectedResult(&api.Prompt{ToolName: "write_file"}, "not today")
	msgs, _ = conversationOf(t, b, nil, func(c model.ToolCall) model.Message {
		m := model.Message{Role: model.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: `{"selections":["staging"],"labels":["预发布 (Staging)"],"customInput":"","cancelled":false}`}
		if c.Name == "write_file" {
			m.Content, m.IsError = rejected.Content, rejected.IsError
		}
		return m
	})
	final = msgs[len(msgs)-1].Content
	require.NotContains(t, final, "全部完成")
	require.NotContains(t, final, "All done")
	require.True(t, strings.HasPrefix(final, "演示结束，但部署计划没有写入"), final)
	require.Contains(t, final, "- write_file: 出错 (error): The user declined this write_file call; it did not run. Their message: \"not today\"")
	require.Contains(t, final, "| 审批 (approval) | `write_file`：没有写入 (not written) |")

	// The first reply says what the demo shows and streams long enough at
	// the demo's pace (Scenario.Delay) for a person to press Stop.
	first := s.Turns[0].Text
	for _, shown := range []string{"单选", "MCP", "luban-demo/deploy-plan.md", "Stop"} {
		require.Contains(t, first, shown)
	}
	streams := time.Duration(utf8.RuneCountInString(first)/scripted.PaceRunes) * scripted.New(s).Delay()
	require.GreaterOrEqual(t, streams, 3*time.Second, "the first reply streams for %s", streams)
}

// demoTool is the demo MCP server's tool as the model sees it.
const demoTool = demomcp.Name + "__" + demomcp.ToolName

// The demo is paced so a person sees its replies stream and can stop them;
// paced text comes PaceRunes characters at a time, and a stop (ctx done)
// mid-stream ends Generate before the next piece.
func TestDemoIsPacedAndAStopEndsTheStream(t *testing.T) {
	t.Parallel()
	p := scripted.New(scripted.Demo())
	require.Positive(t, p.Delay(), "the demo streams slowly enough to press Stop")
	p.SetDelay(time.Microsecond) // the same path, without waiting in the test
	req := &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	var deltas []string
	resp, err := p.Generate(t.Context(), req, func(s string) { deltas = append(deltas, s) })
	require.NoError(t, err)
	require.Equal(t, resp.Message.Content, strings.Join(deltas, ""))
	require.Len(t, deltas, (utf8.RuneCountInString(resp.Message.Content)+scripted.PaceRunes-1)/scripted.PaceRunes)
	for _, d := range deltas[:len(deltas)-1] {
		require.Equal(t, scripted.PaceRunes, utf8.RuneCountInString(d), d)
	}

	ctx, stop := context.WithCancel(t.Context())
	var got []string
	_, err = p.Generate(ctx, req, func(s string) {
		got = append(got, s)
		stop()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, got, 1, "no piece after the stop")

	// A delay of 0 (tests, LUBAN_SCRIPTED_DELAY=0) streams at once in four pieces.
	p.SetDelay(0)
	deltas = nil
	_, err = p.Generate(t.Context(), req, func(s string) { deltas = append(deltas, s) })
	require.NoError(t, err)
	require.LessOrEqual(t, len(deltas), 5)
}

func TestScenarioDelay(t *testing.T) {
	t.Parallel()
	s, err := scripted.Parse([]byte(`{"name":"slow","delay":"40ms","final":"ok"}`))
	require.NoError(t, err)
	require.Equal(t, 40*time.Millisecond, scripted.New(s).Delay())
	s, err = scripted.Parse([]byte(`{"name":"fast","final":"ok"}`))
	require.NoError(t, err)
	require.Zero(t, scripted.New(s).Delay())
	for _, bad := range []string{`"soon"`, `"-1s"`} {
		_, err = scripted.Parse([]byte(`{"name":"x","delay":` + bad + `,"final":"ok"}`))
		require.ErrorContains(t, err, "delay")
	}
}
