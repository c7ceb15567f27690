package mcpclienttest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// Two replicas on PostgreSQL: server-everything's in-session elicitation is
// asked through replica A, which holds the MCP client session, and answered
// through replica B. B accepts the answer once and durably (the receipt,
// then the continuation on B's stream); A's waiting call finds it through
// the store (NOTIFY) and hands it to the server over its session, and the
// run goes on. A second answer, through A, is 409 already_resolved.
func TestInSessionElicitationAnsweredThroughAnotherReplica(t *testing.T) {
	t.Parallel()
	db := pgtest.Schema(t)
	cfg, _ := everythingConfig(t)
	fake := fakeopenai.New(t)
	fake.Push(call("c_form", "everything__trigger-elicitation-request", `{}`), text("Thanks, Ada."))
	start := func(name string) *lubantest.Proc {
		// A 30s lease: a loaded machine must not hand A's run to B.
		return lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: name, DB: db, ModelURL: fake.URL(), Lease: "30s",
			Env: []string{"LUBAN_CONFIG=" + cfg}, TermOnCleanup: true})
	}
	a, b := start("A"), start("B")

	evs := until(t, a.API.Chat("", "go"), "user_input_required")
	q := decode(t, last(evs))
	require.Equal(t, "elicitation", q["tool"])
	sid, rid := q["sessionId"].(string), q["id"].(string)
	var pending struct {
		Pending map[string]any `json:"pending"`
	}
	require.Equal(t, http.StatusOK, b.API.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pending))
	assert.Equal(t, true, pending.Pending["resumable"], "B sees a question A can still hand over")

	answer := map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"name": "Ada Lovelace", "integer": 7, "check": true, "email": "ada@example.com", "titledMultipleSelectEnum": []string{"fish-2"}}}
	resp := b.API.Continue(answer)
	require.Equal(t, http.StatusOK, resp.StatusCode, "B accepts the answer")
	rest := until(t, b.API.Open(resp, "B-continue"), "done")
	rc := decode(t, rest[0])
	require.Equal(t, "user_input_resolved", rest[0].Name)
	assert.Equal(t, "answered", rc["status"])
	assert.Equal(t, "accept", rc["decision"])
	res := toolResult(t, rest, "c_form")
	assert.Equal(t, false, res["isError"])
	assert.Contains(t, res["content"], "Name: Ada Lovelace", "A's MCP session carried B's answer to the server")
	assert.Equal(t, "completed", decode(t, last(rest))["status"])

	code, body := continueJSON(t, a, answer)
	require.Equal(t, http.StatusConflict, code, "%v", body)
	assert.Equal(t, "already_resolved", body["error"].(map[string]any)["code"])
	require.Len(t, fake.Requests(), 2)
}
