package sqlite

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lubanhq/luban/store"
)

// InteractionGetState implements store.Executor in one statement: the
// interaction, its session, its run and (when asked) the session's
// messages are the parts of one UNION ALL, each row tagged with its part
// and padded with NULLs to the widest, so an answer costs one read (one
// snapshot, and one page-cache check on the reader) instead of four.
func (e executor) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	sq := stateQueries()
	q := sq.noMessages
	if p.Messages {
		q = sq.messages
	}
	rows, err := e.r.QueryContext(ctx, q, idAsk.enc(p.ID))
	if err != nil {
		return nil, fmt.Errorf("sqlite: interaction state: %w", err)
	}
	defer rows.Close()
	out := &store.InteractionState{}
	vals := make([]any, sq.width+1)
	dest := make([]any, len(vals))
	for i := range vals {
		dest[i] = &vals[i]
	}
	row := make([]driver.Value, sq.width)
	r := &rawRow{}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("sqlite: interaction state: %w", err)
		}
		part, _ := vals[0].(int64)
		for i := range row {
			row[i] = vals[i+1]
		}
		r.vals = row[:sq.cols[part]]
		switch part {
		case statePartInteraction:
			out.Interaction, err = scanInteraction(r)
		case statePartSession:
			out.Session, err = scanSession(r)
		case statePartRun:
			out.Run, err = scanRun(r)
		case statePartMessage:
			var m *store.Message
			if m, err = scanMessage(r); err == nil {
				out.Messages = append(out.Messages, m)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: interaction state: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: interaction state: %w", err)
	}
	if out.Interaction == nil {
		return nil, fmt.Errorf("interaction %s: %w", p.ID, store.ErrNotFound)
	}
	if out.Session == nil {
		return nil, fmt.Errorf("session %s: %w", out.Interaction.SessionID, store.ErrNotFound)
	}
	// The messages' part reads them in rowid order (their seq); a plan
	// that does not is sorted here.
	if !slices.IsSortedFunc(out.Messages, func(a, b *store.Message) int { return cmpSeq(a.Seq, b.Seq) }) {
		slices.SortFunc(out.Messages, func(a, b *store.Message) int { return cmpSeq(a.Seq, b.Seq) })
	}
	return out, nil
}

func cmpSeq(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// The parts of InteractionGetState's statement, its rows' first column.
const (
	statePartInteraction = iota
	statePartSession
	statePartRun
	statePartMessage
)

// stateQuery is InteractionGetState's statement, with and without the
// messages' part; cols is the number of columns of each part, width the
// widest.
type stateQuery struct {
	messages, noMessages string
	cols                 [4]int
	width                int
}

var stateQueries = sync.OnceValue(func() stateQuery {
	parts := [4]struct{ cols, from string }{
		statePartInteraction: {interactionCols, `FROM interactions WHERE id = ?1`},
		statePartSession:     {sessionCols, `FROM sessions WHERE id = (SELECT session_id FROM interactions WHERE id = ?1)`},
		statePartRun:         {runCols, `FROM runs WHERE id = (SELECT run_id FROM interactions WHERE id = ?1)`},
		statePartMessage:     {messageCols, `FROM messages WHERE ` + messagesOf(`(SELECT session_id FROM interactions WHERE id = ?1)`)},
	}
	var sq stateQuery
	for i, p := range parts {
		sq.cols[i] = columnCount(p.cols)
		sq.width = max(sq.width, sq.cols[i])
	}
	sel := make([]string, len(parts))
	for i, p := range parts {
		sel[i] = fmt.Sprintf("SELECT %d, %s%s %s", i, p.cols, strings.Repeat(", NULL", sq.width-sq.cols[i]), p.from)
	}
	sq.messages = strings.Join(sel, "\nUNION ALL ")
	sq.noMessages = strings.Join(sel[:statePartMessage], "\nUNION ALL ")
	return sq
})

// columnCount is the number of result columns in cols, a select list:
// its commas outside parentheses, plus one.
func columnCount(cols string) int {
	n, depth := 1, 0
	for _, c := range cols {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				n++
			}
		}
	}
	return n
}
