package mcpclienttest

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/everythingtest"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// The model calls server-everything's tools over stdio: echo, its
// elicitation (a form answered through /api/chat/continue after an answer
// the requestedSchema rejects) and get-sum under approval: always. A second
// configured server is down: reported in /readyz, never fatal. SIGTERM
// stops the stdio server with luban.
func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	mk := marker()
	down := everythingtest.FreePort(t)
	cfg := writeConfig(t, fmt.Sprintf(`
mcp:
  servers:
    - name: everything
      command: node
      args: [%q, stdio, %q]
      timeout: 30s
    - name: down
      url: http://127.0.0.1:%d/mcp
agents:
  - name: mcp
    tools: ["everything__*", "down__*"]
    approval:
      everything__get-sum: always
`, entry, mk, down))
	fake := fakeopenai.New(t)
	fake.Push(
		call("c_echo", "everything__echo", `{"message":"hi luban"}`),
		call("c_form", "everything__trigger-elicitation-request", `{}`),
		call("c_sum", "everything__get-sum", `{"a":2,"b":3}`),
		text("All done."),
	)
	p := startProc(t, "p1", filepath.Join(t.TempDir(), "luban.db"), fake, cfg)

	var ready struct {
		Status string `json:"status"`
		Checks map[string]struct {
			Status string         `json:"status"`
			Detail map[string]any `json:"detail"`
		} `json:"checks"`
	}
	require.Equal(t, http.StatusOK, p.API.JSON("GET", "/readyz", nil, &ready), "a server that is down is not fatal")
	assert.Equal(t, "ok", ready.Status)
	assert.Equal(t, "ok", ready.Checks["mcp:everything"].Status)
	assert.Equal(t, "ready", ready.Checks["mcp:everything"].Detail["state"])
	assert.Equal(t, "stdio", ready.Checks["mcp:everything"].Detail["transport"])
	assert.Greater(t, ready.Checks["mcp:everything"].Detail["tools"], 10.0)
	assert.Equal(t, "unavailable", ready.Checks["mcp:down"].Status)
	assert.Equal(t, "down", ready.Checks["mcp:down"].Detail["state"])
	assert.NotEmpty(t, ready.Checks["mcp:down"].Detail["nextAttempt"])

	st := p.API.Chat("", "try the MCP tools")
	evs := until(t, st, "user_input_required")
	assert.Equal(t, "Echo: hi luban", toolResult(t, evs, "c_echo")["content"])
	q := decode(t, last(evs))
	assert.Equal(t, "elicitation", q["tool"])
	assert.Equal(t, "form", q["mode"])
	assert.Equal(t, "everything", q["server"])
	assert.Equal(t, "c_form", q["toolCallId"])
	assert.Equal(t, "Please provide inputs for the following fields:", q["title"])
	assert.Equal(t, true, q["resumable"])
	require.NotNil(t, q["requestedSchema"])
	fields := q["fields"].([]any)
	first := fields[0].(map[string]any)
	assert.Equal(t, "name", first["name"])
	assert.Equal(t, true, first["required"])
	types := map[string]string{}
	for _, f := range fields {
		m := f.(map[string]any)
		types[m["name"].(string)] = m["type"].(string)
	}
	assert.Equal(t, map[string]string{"name": "string", "check": "boolean", "firstLine": "string", "email": "string", "homepage": "string",
		"birthdate": "date", "integer": "integer", "number": "number", "untitledSingleSelectEnum": "enum", "untitledMultipleSelectEnum": "multi",
		"titledSingleSelectEnum": "enum", "titledMultipleSelectEnum": "multi", "legacyTitledEnum": "enum"}, types)
	_, secret := q["elicit"]
	assert.False(t, secret, "the stored state of the elicitation never reaches a client")

	reqs := fake.Requests()
	require.NotEmpty(t, reqs)
	assert.Contains(t, reqs[0].ToolNames, "everything__echo")
	assert.Contains(t, reqs[0].ToolNames, "everything__trigger-elicitation-request")
	assert.Contains(t, string(reqs[0].Raw), `"message"`, "the tool's JSON Schema reaches the model")

	sid, rid := q["sessionId"].(string), q["id"].(string)
	var pending struct {
		Pending map[string]any `json:"pending"`
	}
	require.Equal(t, 200, p.API.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pending))
	assert.Equal(t, rid, pending.Pending["id"])

	code, body := continueJSON(t, p, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"name": "Ada", "integer": 500}})
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", body)
	errBody := body["error"].(map[string]any)
	assert.Equal(t, "invalid_answer", errBody["code"])
	assert.Equal(t, "content.integer", errBody["details"].([]any)[0].(map[string]any)["field"])
	code, body = continueJSON(t, p, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept"})
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", body)
	require.Equal(t, 200, p.API.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pending))
	assert.Equal(t, rid, pending.Pending["id"], "a rejected answer leaves the question pending")

	resp := p.API.Continue(map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept",
		"content": map[string]any{"name": "Ada Lovelace", "integer": 7, "check": true, "email": "ada@example.com", "titledMultipleSelectEnum": []string{"fish-2"}}})
	require.Equal(t, 200, resp.StatusCode)
	evs = until(t, p.API.Open(resp, "continue"), "user_input_required")
	rc := decode(t, evs[0])
	require.Equal(t, "user_input_resolved", evs[0].Name)
	assert.Equal(t, "answered", rc["status"])
	assert.Equal(t, "accept", rc["decision"])
	assert.Equal(t, "c_form", rc["toolCallId"])
	assert.Equal(t, "Ada Lovelace", rc["content"].(map[string]any)["name"])
	res := toolResult(t, evs, "c_form")
	assert.Contains(t, res["content"], "Name: Ada Lovelace")
	assert.Contains(t, res["content"], "Favorite Integer: 7")
	assert.Equal(t, false, res["isError"])

	ap := decode(t, last(evs))
	assert.Equal(t, "approval", ap["tool"], "an MCP tool under approval: always waits for a person")
	assert.Equal(t, "everything__get-sum", ap["toolName"])
	assert.Equal(t, "c_sum", ap["toolCallId"])
	resp = p.API.Continue(map[string]any{"sessionId": sid, "requestId": ap["id"], "decision": "approve"})
	require.Equal(t, 200, resp.StatusCode)
	evs = until(t, p.API.Open(resp, "approve"), "done")
	assert.Equal(t, "The sum of 2 and 3 is 5.", toolResult(t, evs, "c_sum")["content"])
	assert.Equal(t, "completed", decode(t, last(evs))["status"])

	reqs = fake.Requests()
	require.Len(t, reqs, 4)
	assert.Contains(t, string(reqs[2].Raw), "Name: Ada Lovelace", "the model gets the tool's result")

	p.Term()
	p.WaitExit()
	waitGone(t, mk)
}

// Over streamable HTTP (server-everything started by the test): a form
// declined, a form cancelled, and a URL elicitation accepted.
func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := everythingtest.StartHTTP(t, everythingtest.FreePort(t))
	cfg := writeConfig(t, fmt.Sprintf(`
mcp:
  servers:
    - name: ev
      url: %s
      headers:
        X-Luban-Test: "1"
`, url))
	fake := fakeopenai.New(t)
	fake.Push(
		call("c1", "ev__trigger-elicitation-request", `{}`),
		call("c2", "ev__trigger-elicitation-request", `{}`),
		call("c3", "ev__trigger-url-elicitation", `{"url":"https://auth.example.com/authorize?client=luban","message":"Sign in to continue"}`),
		text("ok"),
	)
	p := startProc(t, "p1", filepath.Join(t.TempDir(), "luban.db"), fake, cfg)
	st := p.API.Chat("", "go")
	q := decode(t, last(until(t, st, "user_input_required")))
	sid := q["sessionId"].(string)
	require.Equal(t, "form", q["mode"])

	resp := p.API.Continue(map[string]any{"sessionId": sid, "requestId": q["id"], "decision": "decline"})
	require.Equal(t, 200, resp.StatusCode)
	evs := until(t, p.API.Open(resp, "decline"), "user_input_required")
	assert.Contains(t, toolResult(t, evs, "c1")["content"], "User declined")
	assert.Equal(t, "decline", decode(t, evs[0])["decision"])

	q = decode(t, last(evs))
	resp = p.API.Continue(map[string]any{"sessionId": sid, "requestId": q["id"], "cancelled": true})
	require.Equal(t, 200, resp.StatusCode)
	evs = until(t, p.API.Open(resp, "cancel"), "user_input_required")
	assert.Contains(t, toolResult(t, evs, "c2")["content"], "User cancelled")
	assert.Equal(t, "cancelled", decode(t, evs[0])["status"])

	q = decode(t, last(evs))
	assert.Equal(t, "url", q["mode"])
	assert.Equal(t, "https://auth.example.com/authorize?client=luban", q["url"])
	assert.Equal(t, "Sign in to continue", q["title"])
	code, body := continueJSON(t, p, map[string]any{"sessionId": sid, "requestId": q["id"], "decision": "accept", "content": map[string]any{"x": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, code, "a url accept carries no content: %v", body)
	resp = p.API.Continue(map[string]any{"sessionId": sid, "requestId": q["id"], "decision": "accept"})
	require.Equal(t, 200, resp.StatusCode)
	evs = until(t, p.API.Open(resp, "url"), "done")
	assert.Contains(t, toolResult(t, evs, "c3")["content"], "User completed the URL elicitation flow")
}

// kill -9 while server-everything's in-session elicitation waits: the stdio
// server dies with luban (no orphan); after the restart the question is
// resolved not_resumable with a receipt, the call gets an error result
// saying so, the run goes on, and a late answer is 410 not_resumable.
func TestKilledDuringInSessionElicitation(t *testing.T) {
	t.Parallel()
	killedDuringInSessionElicitation(t, filepath.Join(t.TempDir(), "luban.db"))
}

// The same on PostgreSQL (LUBAN_TEST_POSTGRES), a fresh schema.
func TestKilledDuringInSessionElicitationPostgres(t *testing.T) {
	t.Parallel()
	killedDuringInSessionElicitation(t, pgtest.Schema(t))
}

func killedDuringInSessionElicitation(t *testing.T, db string) {
	cfg, mk := everythingConfig(t)
	fake := fakeopenai.New(t)
	fake.Push(call("c1", "everything__trigger-elicitation-request", `{}`), text("The question was lost; please ask me again."))
	p1 := startProc(t, "p1", db, fake, cfg)
	evs := until(t, p1.API.Chat("", "go"), "user_input_required")
	q := decode(t, last(evs))
	sid, rid := q["sessionId"].(string), q["id"].(string)
	require.NotEmpty(t, everythingtest.Processes(mk))
	p1.Kill9()
	p1.WaitKilled()
	waitGone(t, mk)

	p2 := startProc(t, "p2", db, fake, cfg)
	rest := p2.API.EventsUntil(sid, last(evs).ID, "done", waitEvents)
	rc, ok := lubantest.Find(rest, "user_input_resolved")
	require.True(t, ok, "%v", lubantest.Names(rest))
	r := decode(t, rc)
	assert.Equal(t, "not_resumable", r["status"])
	assert.Equal(t, rid, r["requestId"])
	assert.Equal(t, "c1", r["toolCallId"])
	res := toolResult(t, rest, "c1")
	assert.Equal(t, true, res["isError"])
	assert.Contains(t, res["content"], "not_resumable")
	assert.Equal(t, "completed", decode(t, last(rest))["status"])

	code, body := continueJSON(t, p2, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"name": "late"}})
	require.Equal(t, http.StatusGone, code)
	e := body["error"].(map[string]any)
	assert.Equal(t, "not_resumable", e["code"])
	assert.Equal(t, "not_resumable", e["receipt"].(map[string]any)["status"])
}

// Kill -9 while server-everything's in-session elicitation
// waits, restart, answer while the dead process's lease still runs: no
// process holds the call that could take the answer, so the new process
// knows at once (the dead holder's instance lock is gone) that the question
// is not resumable: the pending view says so, and the answer is refused
// 410 not_resumable with the receipt, never 202 answered and lost.
func TestAnswerWithinLeaseAfterKill(t *testing.T) {
	t.Parallel()
	answerWithinLeaseAfterKill(t, filepath.Join(t.TempDir(), "luban.db"))
}

// The same on PostgreSQL (LUBAN_TEST_POSTGRES), a fresh schema.
func TestAnswerWithinLeaseAfterKillPostgres(t *testing.T) {
	t.Parallel()
	answerWithinLeaseAfterKill(t, pgtest.Schema(t))
}

func answerWithinLeaseAfterKill(t *testing.T, db string) {
	cfg, mk := everythingConfig(t)
	fake := fakeopenai.New(t)
	fake.Push(call("c1", "everything__trigger-elicitation-request", `{}`), text("The question was lost; please ask me again."))
	p1 := startProcLease(t, "p1", db, fake, cfg, "10m")
	evs := until(t, p1.API.Chat("", "go"), "user_input_required")
	q := decode(t, last(evs))
	sid, rid := q["sessionId"].(string), q["id"].(string)
	p1.Kill9()
	p1.WaitKilled()
	waitGone(t, mk)

	p2 := startProcLease(t, "p2", db, fake, cfg, "10m")
	var pending struct {
		Request *struct {
			ID        string `json:"id"`
			Resumable bool   `json:"resumable"`
		} `json:"pending"`
	}
	require.Equal(t, http.StatusOK, p2.API.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pending))
	require.NotNil(t, pending.Request, "the question is still pending")
	assert.Equal(t, rid, pending.Request.ID)
	assert.False(t, pending.Request.Resumable, "the process that held the call is dead")

	code, body := continueJSON(t, p2, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"name": "late"}})
	require.Equal(t, http.StatusGone, code, "%v", body)
	e := body["error"].(map[string]any)
	assert.Equal(t, "not_resumable", e["code"])
	assert.Equal(t, "not_resumable", e["receipt"].(map[string]any)["status"])
	rest := p2.API.EventsUntil(sid, last(evs).ID, "user_input_resolved", waitEvents)
	rc, ok := lubantest.Find(rest, "user_input_resolved")
	require.True(t, ok)
	assert.Equal(t, "not_resumable", decode(t, rc)["status"])
}
