package sqlite

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// A trace entry's data and an audit entry's summary are JSON of a few
// shapes (the agent's model_call, tool_call, tool_result, interaction …
// entries, askuser.AuditSummary), most of whose bytes are their member
// names, SHA-256 digests in hex and ids of agent.NewID's form. packTrace
// stores such JSON as a blob that gives those in fewer bytes, and
// unpackTrace gives back the same bytes; data stored as text (before, or
// that packTrace leaves as it is) is read as it is.
//
// JSON text holds no byte below 0x20 but tab, newline and carriage return,
// so the packed form uses the others as codes: the byte tracePacked first,
// then the text with
//
//   - a dictionary string (traceDict) replaced by its code: one byte for
//     the first ones, traceDictX and its index for the rest,
//   - a string of 64 lower-case hex digits by traceHex and its 32 bytes,
//   - a string holding an id of agent.NewID's form by traceID16, the index
//     of its prefix in traceIDs and its 16 bytes (idCodec.pack),
//
// the strings' quotes kept. Data that holds any other byte below 0x20 is
// stored as it is.
const (
	tracePacked = 0x01
	traceHex    = 0x02
	traceID16   = 0x03
	traceDict0  = 0x04 // the code of traceDict[0]
	traceDictX  = 0x1f // then the index of a traceDict string
)

// traceIDs are the id prefixes traceID16 names, by index.
var traceIDs = []idCodec{idCall, idAsk, idRun, idMessage, idSession, idTask}

// traceDict are the strings the packed form gives by a code, in code order
// from traceDict0, skipping tab, newline and carriage return: append,
// never reorder (codes are stored). Longer strings come first where one
// starts another, so the longest is taken.
var traceDict = []string{
	`{"finishReason":"`, `","latencyMs":`, `,"messageCount":`, `,"model":"`, `","provider":"`,
	`,"retries":`, `,"tools":[`, `{"argumentsBytes":`, `,"argumentsSha256":"`,
	`","isError":false,"name":"`, `","isError":true,"name":"`, `","name":"`,
	`","toolCallId":"`, `{"action":"`, `","requestId":"`, `{"contentBytes":`, `,"contentSha256":"`,
	`{"toolCallId":"`, `"ask_user"`, `"}`,
	// askuser.AuditSummary and a question's "requested" summary.
	`{"mode":"`, `","optionCount":`, `,"questionCount":`, `,"tool":"`, `","selections":[`,
	`],"selectionCount":`, `","selectionCount":`, `,"customInputLen":`, `,"customInputSha256":"`,
}

// traceCode[i] is the code of traceDict[i]; traceEntry[c] the string of
// one-byte code c ("" for a code that is not one).
var (
	traceCode  [][]byte
	traceEntry [0x20]string
)

func init() {
	if len(traceDict) > 0x100 {
		panic("sqlite: traceDict has more strings than codes")
	}
	c := byte(traceDict0)
	for k, s := range traceDict {
		for c == '\t' || c == '\n' || c == '\r' {
			c++
		}
		if c >= traceDictX {
			traceCode = append(traceCode, []byte{traceDictX, byte(k)})
			continue
		}
		traceCode = append(traceCode, []byte{c})
		traceEntry[c] = s
		c++
	}
}

// packTrace is the value data is stored as: the packed blob, or data as
// text when it holds a byte below 0x20 other than whitespace or packing
// would not make it shorter.
func packTrace(data []byte) any {
	for _, b := range data {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			return string(data)
		}
	}
	out := make([]byte, 1, max(len(data), 1))
	out[0] = tracePacked
	for i := 0; i < len(data); {
		b := data[i]
		if b == '"' {
			if o, n, ok := packQuoted(append(out, '"'), data[i+1:]); ok {
				out, i = o, i+1+n
				continue
			}
		}
		if b == '{' || b == ',' || b == '"' {
			if k := traceDictAt(data[i:]); k >= 0 {
				out = append(out, traceCode[k]...)
				i += len(traceDict[k])
				// A string the entry opens may be a digest or an id.
				if strings.HasSuffix(traceDict[k], `"`) {
					if o, n, ok := packQuoted(out, data[i:]); ok {
						out, i = o, i+n
					}
				}
				continue
			}
		}
		out = append(out, b)
		i++
	}
	if len(out) >= len(data) {
		return string(data)
	}
	return out
}

// packQuoted appends to out the packed form of the digest or id that data
// (the text after a string's opening quote) starts with, and reports the
// bytes of data it stands for (the closing quote not among them); ok is
// false, and out unchanged, when data starts with neither.
func packQuoted(out, data []byte) ([]byte, int, bool) {
	// hex64"
	if len(data) > 64 && data[64] == '"' && isLowerHex(data[:64]) {
		out = append(out, traceHex)
		out, _ = hex.AppendDecode(out, data[:64]) // isLowerHex: no error
		return out, 64, true
	}
	// prefix_id"
	if n, code, id, ok := traceIDAt(data); ok {
		out = append(out, traceID16, code)
		return append(out, id[:]...), n, true
	}
	return out, 0, false
}

// traceDictAt is the index of the longest traceDict string data starts
// with (the first of those as long), -1 for none.
func traceDictAt(data []byte) int { return traceDictBy.at(traceDict, data) }

// traceDictBy indexes traceDict.
var traceDictBy = newDictIndex(traceDict)

// dictIndex lists, for the first two bytes of each string of a dictionary
// (all have at least two), the indexes of the strings starting with them,
// in the dictionary's order: a lookup compares a few strings, not all.
type dictIndex map[uint16][]int

// newDictIndex indexes dict; it panics on a string shorter than two bytes.
func newDictIndex(dict []string) dictIndex {
	x := dictIndex{}
	for k, s := range dict {
		if len(s) < 2 {
			panic("sqlite: dictionary string shorter than two bytes: " + s)
		}
		key := uint16(s[0])<<8 | uint16(s[1])
		x[key] = append(x[key], k)
	}
	return x
}

// at is the index of the longest string of dict (the one x indexes) data
// starts with, the first of those as long; -1 for none.
func (x dictIndex) at(dict []string, data []byte) int {
	if len(data) < 2 {
		return -1
	}
	best := -1
	for _, k := range x[uint16(data[0])<<8|uint16(data[1])] {
		s := dict[k]
		if len(s) <= len(data) && string(data[:len(s)]) == s && (best < 0 || len(s) > len(dict[best])) {
			best = k
		}
	}
	return best
}

// traceIDAt reports whether data starts with an id of agent.NewID's form
// followed by a quote: its length, the index of its prefix and its bytes.
func traceIDAt(data []byte) (int, byte, [16]byte, bool) {
	for k, c := range traceIDs {
		n := len(c) + idChars
		if n < len(data) && data[n] == '"' && bytes.HasPrefix(data, []byte(c)) {
			if id, ok := c.pack(string(data[:n])); ok {
				return n, byte(k), id, true
			}
		}
	}
	return 0, 0, [16]byte{}, false
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// packSummary is the value an audit summary is stored as: NULL for none,
// else packTrace's.
func packSummary(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return packTrace(b)
}

// unpackSummary is the summary a stored value holds (packSummary's
// inverse): nil for NULL or empty text.
func unpackSummary(v any) (json.RawMessage, error) {
	if s, ok := v.(string); ok && s == "" {
		return nil, nil
	}
	return unpackTrace(v)
}

// unpackTrace is the data a stored value holds (packTrace's inverse).
func unpackTrace(v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case string:
		return json.RawMessage(v), nil
	case []byte:
		if len(v) == 0 || v[0] != tracePacked {
			return json.RawMessage(bytes.Clone(v)), nil
		}
		return unpackTraceBlob(v[1:])
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("sqlite: trace data stored as %T", v)
}

func unpackTraceBlob(b []byte) (json.RawMessage, error) {
	out := make([]byte, 0, 2*len(b)+64)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == traceHex:
			if i+33 > len(b) {
				return nil, fmt.Errorf("sqlite: packed trace data: a digest cut short")
			}
			out = hex.AppendEncode(out, b[i+1:i+33])
			i += 33
		case c == traceID16:
			if i+18 > len(b) || int(b[i+1]) >= len(traceIDs) {
				return nil, fmt.Errorf("sqlite: packed trace data: an id cut short or of no known prefix")
			}
			id, err := traceIDs[b[i+1]].unpack(b[i+2 : i+18])
			if err != nil {
				return nil, err
			}
			out = append(out, id...)
			i += 18
		case c == traceDictX:
			if i+2 > len(b) || int(b[i+1]) >= len(traceDict) {
				return nil, fmt.Errorf("sqlite: packed trace data: a dictionary index cut short or out of range")
			}
			out = append(out, traceDict[b[i+1]]...)
			i += 2
		case c < 0x20 && traceEntry[c] != "":
			out = append(out, traceEntry[c]...)
			i++
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			return nil, fmt.Errorf("sqlite: packed trace data: unknown code %#x", c)
		default:
			out = append(out, c)
			i++
		}
	}
	return out, nil
}
