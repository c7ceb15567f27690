package acceptance

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
)

// A rejected answer's 422 stays small whatever the answer held: the first
// server.MaxErrorDetails (20) field errors, each message cut, and the count
// of all of them; the request stays pending and answerable.
func TestInvalidAnswerDetailsAreBounded(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_b", name: "ask_user", args: `{"title":"哪些？","mode":"multiple","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`}}})
	p := e.ask("", "问很多")

	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf("unknown-option-%05d", i)
	}
	for _, tc := range []struct {
		name       string
		selections []string
		total      int
	}{
		{"10,000 unknown ids", many, 10000},
		{"one huge unknown id", []string{strings.Repeat("长", 200000)}, 0},
	} {
		resp := e.srv.Continue(body(p.sessionID, p.req.ID, tc.selections, ""))
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "%s: %.300s", tc.name, raw)
		require.Less(t, len(raw), 16<<10, "%s: the error body is %d bytes", tc.name, len(raw))
		var out struct {
			Error struct {
				Code         string           `json:"code"`
				Message      string           `json:"message"`
				Details      []api.FieldError `json:"details"`
				DetailsTotal int              `json:"detailsTotal"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(raw, &out))
		require.Equal(t, "invalid_answer", out.Error.Code)
		require.Equal(t, tc.total, out.Error.DetailsTotal, tc.name)
		require.NotEmpty(t, out.Error.Details)
		require.LessOrEqual(t, len(out.Error.Details), 20)
		require.Equal(t, "selections[0]", out.Error.Details[0].Field)
		require.Contains(t, out.Error.Details[0].Message, "unknown option id")
		require.Equal(t, api.DetailUnknownOption, out.Error.Details[0].Code, "the code survives the cut")
		option, _ := out.Error.Details[0].Params["option"].(string)
		require.NotEmpty(t, option, "the option param survives the cut")
		require.LessOrEqual(t, len(option), 300+len("…"), "params are cut like messages")
		if tc.total > 0 {
			require.Len(t, out.Error.Details, 20)
			require.Equal(t, "selections[19]", out.Error.Details[19].Field)
			require.Contains(t, out.Error.Message, "9980 more")
		}
	}
	pv := e.pending(p.sessionID)
	require.NotNil(t, pv.Pending, "the request stays pending")
	require.Equal(t, p.req.ID, pv.Pending.ID)
}
