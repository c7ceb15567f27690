package sqlite

import (
	"bytes"
	"fmt"
)

// An event's data is stored packed (packEventData) when that is shorter:
// a blob where each quoted id the row already names is one byte, each
// other quoted id of agent.NewID's form is a byte and its 16 (idCodec),
// and each eventDict string is one byte. Data that is not packed is stored
// as the text it is: SQLite's type of the value says which (rows written
// before the packing are text).
//
// The bytes that stand for ids and strings are control bytes JSON text
// never holds unescaped; data holding one (not JSON) is never packed, so
// unpacking gives back every byte that was packed.
const (
	evSession byte = 0x01 // "<the row's session id>"
	evRun     byte = 0x02 // "<the row's run id>"
	evRef     byte = 0x03 // "<the row's message reference>"
	evID      byte = 0x10 // evID+i: "<an id of evIDCodecs[i]>", its 16 bytes follow
)

// evIDCodecs are the id forms packed as 16 bytes, in their byte's order:
// never reorder (stored); the bytes after them are eventDict's, so one
// more form takes the place of a string.
var evIDCodecs = [...]idCodec{idRun, idAsk, idSession, idMessage, idCall, idTask}

// eventNames are the event names stored as small integers (any other name
// is stored as its text), in code order: append, never reorder (stored).
var eventNames = enum{"session", "message_delta", "reasoning_delta", "message", "tool_call", "tool_result",
	"user_input_required", "user_input_resolved", "user_input_reminder", "done", "error"}

// eventDict are the strings of the agent's events (api's event payloads,
// with the hole of a message reference, store.SpliceMessage) stored as one
// byte each, in the order of the free control bytes from 0x04 (evDictCode):
// append, never reorder (stored); where several start the data, the
// longest is taken. Migration 00024 brought them; its Down stores the rows
// without them.
var eventDict = [...]string{
	`{"sessionId":`, `,"runId":`, `{"messageId":`, `,"role":"user","content":""}`, `,"role":"assistant","content":""}`,
	`,"role":"`, `,"content":""`, `{"toolCallId":`, `,"name":`, `"ask_user"`, `,"arguments":""}`, `,"isError":false`,
	`,"isError":true`, `,"delta":"`, `{"runId":`, `,"status":"`, `{"requestId":`, `,"toolCallId":`, `,"selections":[`,
}

// evDictCode[i] is the byte of eventDict[i]; evDictEntry[c] the string of
// byte c ("" for a byte that is not one).
var (
	evDictCode  [len(eventDict)]byte
	evDictEntry [0x20]string
)

func init() {
	c := byte(0x04)
	for i, s := range eventDict {
		for c == '\t' || c == '\n' || c == '\r' || (c >= evID && c < evID+byte(len(evIDCodecs))) {
			c++
		}
		if c >= 0x20 {
			panic("sqlite: eventDict has more strings than free control bytes")
		}
		evDictCode[i], evDictEntry[c] = c, s
		c++
	}
}

// evDictAt is the index of the longest eventDict string data starts with
// (the first of those as long), -1 for none.
func evDictAt(data []byte) int { return evDictBy.at(eventDict[:], data) }

// evDictBy indexes eventDict.
var evDictBy = newDictIndex(eventDict[:])

// packable reports whether data holds none of the bytes packEventData
// writes for ids: JSON text has no control byte but tab, newline and
// carriage return.
func packable(data []byte) bool {
	for i := 0; i < len(data); i++ {
		if c := data[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// packEventData is the value an event's data is stored as for a row of
// session, run and message reference ref (either may be ""): the packed
// blob when data can be packed and that is shorter, else the text.
func packEventData(data []byte, session, run, ref string) any {
	return packEvent(data, session, run, ref, true)
}

// packEvent is packEventData, with eventDict's strings packed only when
// dict is set (the form before migration 00024, which its Down restores).
func packEvent(data []byte, session, run, ref string, dict bool) any {
	if !packable(data) || (bytes.IndexByte(data, '"') < 0) {
		return string(data)
	}
	named := [...]struct {
		id string
		b  byte
	}{{session, evSession}, {run, evRun}, {ref, evRef}}
	out := make([]byte, 0, len(data))
	packed := false
	for i := 0; i < len(data); {
		c := data[i]
		if dict && (c == '{' || c == ',' || c == '"') {
			if k := evDictAt(data[i:]); k >= 0 {
				out, i, packed = append(out, evDictCode[k]), i+len(eventDict[k]), true
				continue
			}
		}
		if c != '"' {
			j := i + 1
			for j < len(data) && data[j] != '"' && (!dict || (data[j] != '{' && data[j] != ',')) {
				j++
			}
			out = append(out, data[i:j]...)
			i = j
			continue
		}
		rest := data[i+1:]
		n := 0
		for _, nm := range named {
			if nm.id != "" && len(rest) > len(nm.id) && rest[len(nm.id)] == '"' && string(rest[:len(nm.id)]) == nm.id {
				out, n = append(out, nm.b), len(nm.id)+2
				break
			}
		}
		if n == 0 {
			for c, codec := range evIDCodecs {
				l := len(codec) + idChars
				if len(rest) <= l || rest[l] != '"' {
					continue
				}
				if b, ok := codec.pack(string(rest[:l])); ok {
					out, n = append(append(out, evID+byte(c)), b[:]...), l+2
					break
				}
			}
		}
		if n == 0 {
			out, n = append(out, '"'), 1
		} else {
			packed = true
		}
		i += n
	}
	if !packed || len(out) >= len(data) {
		return string(data)
	}
	return out
}

// unpackEventData is the data a stored value v holds (packEventData's
// inverse) for a row of session, run and ref.
func unpackEventData(v any, session, run, ref string) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return []byte(v), nil
	case nil:
		return nil, nil
	case []byte:
		out := make([]byte, 0, len(v)+64)
		for i := 0; i < len(v); i++ {
			c := v[i]
			switch {
			case c == evSession:
				out = appendQuoted(out, session)
			case c == evRun:
				out = appendQuoted(out, run)
			case c == evRef:
				out = appendQuoted(out, ref)
			case c < 0x20 && evDictEntry[c] != "":
				out = append(out, evDictEntry[c]...)
			case c >= evID && c < evID+byte(len(evIDCodecs)):
				if i+16 >= len(v) {
					return nil, fmt.Errorf("sqlite: event data: a packed id cut short")
				}
				id, err := evIDCodecs[c-evID].unpack(v[i+1 : i+17])
				if err != nil {
					return nil, err
				}
				out = appendQuoted(out, id)
				i += 16
			default:
				out = append(out, c)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("sqlite: event data stored as %T", v)
}

func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// eventKey is the rowid of event seq of the session whose key is sk: the
// session's events are the rowids sk<<32 + 1 … sk<<32 + 2³²−1, in order
// (eventsOf).
func eventKey(sk, seq int64) (int64, error) {
	if sk < 0 || sk >= 1<<31 || seq <= 0 || seq >= 1<<32 {
		return 0, fmt.Errorf("sqlite: event %d of session key %d: out of the events table's key range", seq, sk)
	}
	return sk<<32 | seq, nil
}

// eventsOf is the condition on events e that selects the events of the
// session whose key is the SQL expression sk (evaluated twice).
func eventsOf(sk string) string {
	return `e.k > (` + sk + `) * 4294967296 AND e.k < ((` + sk + `) + 1) * 4294967296`
}

// eventSeq is the SQL expression of an events row's number.
const eventSeq = `(e.k & 4294967295)`

// lastEventSeq is the SQL expression of the number of the last event of
// the session whose key is the SQL expression sk, 0 when it has none.
func lastEventSeq(sk string) string {
	return `COALESCE((SELECT ` + eventSeq + ` FROM events e WHERE ` + eventsOf(sk) + ` ORDER BY e.k DESC LIMIT 1), 0)`
}
