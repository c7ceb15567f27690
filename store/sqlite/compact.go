package sqlite

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// enum stores the values of a text column as small integers: a value it
// names is stored as its code (its index), any other as its text, so that
// nothing a caller writes is refused or changed. The column is declared
// without a text affinity (INTEGER or none), and reading decodes both.
type enum []string

// The enums of the run, interaction and log tables, in code order. Codes are
// stored, and the queries name some (runs.status 1 running, 2
// waiting_input; interactions.status 0 pending; a decision 0 none, 1
// approve): append, never reorder.
var (
	runStatuses         = enum{"", "running", "waiting_input", "completed", "cancelled", "expired", "failed"}
	interactionStatuses = enum{"pending", "answered", "cancelled", "expired"}
	deadlineKinds       = enum{"timeout", "remind", "escalate"}
	assigneeVias        = enum{"", "route", "escalation", "delegate"}
	assigneeDecisions   = enum{"", "approve", "reject"}
	// The trace's kinds and the audit's actions and reasons (migration
	// logsVersion).
	traceKinds   = enum{"", "model_call", "tool_call", "tool_result", "interaction", "tool_started", "webhook", "approval"}
	auditActions = enum{"", "requested", "answered", "cancelled", "expired", "rejected", "approved", "delegated"}
	auditReasons = enum{"", "duplicate", "session_mismatch", "expired", "invalid_answer", "not_resumable", "not_assignee", "already_decided", "self_approval", "restarted"}
)

// enc is the value s is stored as.
func (e enum) enc(s string) any {
	for i, v := range e {
		if v == s {
			return int64(i)
		}
	}
	return s
}

// dec is the value a stored v holds.
func (e enum) dec(v any) (string, error) {
	switch v := v.(type) {
	case int64:
		if v >= 0 && v < int64(len(e)) {
			return e[v], nil
		}
		return "", fmt.Errorf("sqlite: unknown code %d", v)
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("sqlite: an enum stored as %T", v)
}

// into is a Scan destination that decodes the column into *dst.
func (e enum) into(dst *string) enumDest { return enumDest{e, dst} }

// enumDest is a sql.Scanner for an enum column (enum.into).
type enumDest struct {
	e   enum
	dst *string
}

// Scan implements sql.Scanner.
func (d enumDest) Scan(src any) error {
	s, err := d.e.dec(src)
	*d.dst = s
	return err
}

// ---- an interaction's request without its row's columns

// A stored request (store.Interaction.Request, api.InputRequest as JSON)
// names its interaction's id, session, run, tool call, tool and times,
// which its row holds in columns too. packRequest stores it without the
// top-level members whose values its row's columns give byte for byte,
// and unpackRequest puts them back where they were: callers read the same
// bytes that were written. A request that is not a compact JSON object, or
// whose members differ from the columns, keeps what differs; a request
// stored before (TEXT) is read as it is.
//
// A time that differs from its column by whole microseconds (createdAt is
// the question's clock, a little before the row's) is left out too, with
// the difference; resumable, true in every stored request, is left out
// when true.
//
// The packed form is a blob: the byte reqPacked, the number of members
// taken out, for each its field (reqField, +0x80 when it followed a comma,
// +0x40 when a time's difference follows), the offset (uvarint) in the
// rest where it goes back and the difference in microseconds (varint), in
// order; then the rest, the request's bytes without them.
const reqPacked = 1

// reqField is a member a packed request leaves out.
type reqField byte

const (
	rfID reqField = iota
	rfToolCallID
	rfSessionID
	rfRunID
	rfTool
	rfCreatedAt
	rfExpiresAt
	rfResumable
	rfCount
)

// reqKeys are the members' keys as json.Marshal writes them.
var reqKeys = [rfCount]string{`"id":`, `"toolCallId":`, `"sessionId":`, `"runId":`, `"tool":`, `"createdAt":`, `"expiresAt":`, `"resumable":`}

// The flags of a packed member's field byte.
const (
	rfComma = 0x80 // it followed a comma
	rfDelta = 0x40 // a time's difference from its column follows
)

// reqRow is what a request's row holds of it.
type reqRow struct {
	id, toolCallID, sessionID, runID, tool string
	created, expires                       int64 // ts
}

// value is field f's JSON value as json.Marshal writes it from the row (a
// time delta microseconds from its column).
func (r *reqRow) value(f reqField, delta int64, buf []byte) []byte {
	switch f {
	case rfID:
		return jsonString(buf, r.id)
	case rfToolCallID:
		return jsonString(buf, r.toolCallID)
	case rfSessionID:
		return jsonString(buf, r.sessionID)
	case rfRunID:
		return jsonString(buf, r.runID)
	case rfTool:
		return jsonString(buf, r.tool)
	case rfCreatedAt:
		return jsonTime(buf, r.created+delta)
	case rfExpiresAt:
		return jsonTime(buf, r.expires+delta)
	case rfResumable:
		return append(buf, "true"...)
	}
	return buf
}

// jsonString appends s as json.Marshal writes it.
func jsonString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// jsonTime appends the time a ts column holds as json.Marshal writes it
// (UTC, RFC 3339 with the nanoseconds it has).
func jsonTime(buf []byte, v int64) []byte {
	buf = append(buf, '"')
	buf = tm(v).AppendFormat(buf, time.RFC3339Nano)
	return append(buf, '"')
}

// packRequest is the stored form of req in row: a packed blob when some
// member could be left out, else the text.
func packRequest(req []byte, row *reqRow) any {
	members, ok := topMembers(req)
	if !ok {
		return string(req)
	}
	var holes []byte
	rest := make([]byte, 0, len(req))
	var val []byte
	from := 0 // req[from:] is not yet in rest
	n := 0
	for i, m := range members {
		f := keyField(req[m.key:m.val])
		if f == rfCount {
			continue
		}
		v := req[m.val:m.end]
		var delta int64
		if f == rfCreatedAt || f == rfExpiresAt {
			var ok bool
			if delta, ok = timeDelta(v, row, f); !ok {
				continue
			}
		}
		val = row.value(f, delta, val[:0])
		if string(v) != string(val) {
			continue
		}
		// A member after the first goes with the comma before it; the
		// first leaves the comma after it in rest.
		start, code := m.key, byte(f)
		if i > 0 {
			start, code = m.key-1, code|rfComma
		}
		if delta != 0 {
			code |= rfDelta
		}
		rest = append(rest, req[from:start]...)
		from = m.end
		holes = append(holes, code)
		holes = binary.AppendUvarint(holes, uint64(len(rest)))
		if delta != 0 {
			holes = binary.AppendVarint(holes, delta)
		}
		n++
	}
	if n == 0 {
		return string(req)
	}
	rest = append(rest, req[from:]...)
	out := make([]byte, 0, 2+len(holes)+len(rest))
	out = append(out, reqPacked, byte(n))
	out = append(out, holes...)
	return append(out, rest...)
}

// unpackRequest is the request a stored value holds (packRequest's
// inverse): a packed blob is rebuilt from row, text is the request.
func unpackRequest(v any, row *reqRow) (json.RawMessage, error) {
	switch v := v.(type) {
	case string:
		return json.RawMessage(v), nil
	case nil:
		return nil, nil
	case []byte:
		return unpackBlob(v, row)
	}
	return nil, fmt.Errorf("sqlite: a request stored as %T", v)
}

var errPacked = errors.New("sqlite: a packed request is malformed")

func unpackBlob(b []byte, row *reqRow) (json.RawMessage, error) {
	if len(b) < 2 || b[0] != reqPacked {
		return nil, errPacked
	}
	n := int(b[1])
	type hole struct {
		code  byte
		at    int
		delta int64
	}
	holes := make([]hole, 0, n)
	p := 2
	for range n {
		if p >= len(b) {
			return nil, errPacked
		}
		code := b[p]
		at, k := binary.Uvarint(b[p+1:])
		if k <= 0 {
			return nil, errPacked
		}
		p += 1 + k
		var delta int64
		if code&rfDelta != 0 {
			if delta, k = binary.Varint(b[p:]); k <= 0 {
				return nil, errPacked
			}
			p += k
		}
		holes = append(holes, hole{code, int(at), delta})
	}
	rest := b[p:]
	out := make([]byte, 0, len(rest)+64*n)
	from := 0
	for _, h := range holes {
		f := reqField(h.code &^ (rfComma | rfDelta))
		if h.at < from || h.at > len(rest) || f >= rfCount {
			return nil, errPacked
		}
		out = append(out, rest[from:h.at]...)
		from = h.at
		if h.code&rfComma != 0 {
			out = append(out, ',')
		}
		out = append(out, reqKeys[f]...)
		out = row.value(f, h.delta, out)
	}
	out = append(out, rest[from:]...)
	return out, nil
}

// timeDelta is how many microseconds the time v (a JSON string) is after
// field f's column, false when it is no time json.Marshal writes in UTC
// (value checks the bytes).
func timeDelta(v []byte, row *reqRow, f reqField) (int64, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(v[1:len(v)-1]))
	if err != nil || t.IsZero() {
		return 0, false
	}
	col := row.created
	if f == rfExpiresAt {
		col = row.expires
	}
	return ts(t) - col, true
}

// keyField is the field whose key (with its colon) k is, rfCount for any
// other.
func keyField(k []byte) reqField {
	for f, key := range reqKeys {
		if string(k) == key {
			return reqField(f)
		}
	}
	return rfCount
}

// member is a top-level member of a JSON object: its key (quoted, with the
// colon) is b[key:val], its value b[val:end].
type member struct{ key, val, end int }

// topMembers are the members of the compact JSON object b (no white space
// between its top-level tokens), false when b is not one.
func topMembers(b []byte) ([]member, bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, false
	}
	var out []member
	i := 1
	if b[i] == '}' {
		return nil, i == len(b)-1
	}
	for {
		key := i
		j, ok := skipString(b, i)
		if !ok || j >= len(b) || b[j] != ':' {
			return nil, false
		}
		val := j + 1
		end, ok := skipValue(b, val)
		if !ok || end >= len(b) {
			return nil, false
		}
		out = append(out, member{key, val, end})
		switch b[end] {
		case ',':
			i = end + 1
		case '}':
			return out, end == len(b)-1
		default:
			return nil, false
		}
	}
}

// skipString is the index after the JSON string starting at b[i].
func skipString(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue is the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' {
		j++
	}
	return j, j > i
}
