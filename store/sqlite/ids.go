package sqlite

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// idCodec stores the ids of one column compactly. Its value is the prefix
// the column's ids are made with, "_" included ("run_", "ask_"): an id of
// the form prefix + 26 lower-case base32 characters (16 random bytes,
// agent.NewID) is stored as a 16-byte blob, any other id as the text it is
// (tests, old clients and other writers use other forms). The mapping is
// one to one, so equality, uniqueness and lookups behave as on the text,
// and it keeps the order of the text: two blobs compare (memcmp, as SQLite
// compares blobs) as their ids compare as strings. SQLite puts every text
// before every blob; idCompare is that order in Go.
//
// A column that holds ids this way has no type affinity (declared BLOB),
// so that SQLite stores blobs and text as they are given.
type idCodec string

// The prefixes of the ids luban makes (agent.NewID).
const (
	idRun     idCodec = "run_"
	idAsk     idCodec = "ask_"
	idSession idCodec = "sess_"
	idMessage idCodec = "msg_"
	idCall    idCodec = "call_"
	idTask    idCodec = "task_"
)

// idChars is the length of an id's random part: 16 bytes in unpadded
// base32.
const idChars = 26

// idRank is the rank of a base32 character among the 32 in ASCII order
// ('2'…'7' then 'a'…'z'), and 0xff for any other byte; idChar is its
// inverse.
var (
	idRank [256]byte
	idChar = [32]byte{'2', '3', '4', '5', '6', '7', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j',
		'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z'}
	// idLast are the characters the 26th can be (its value holds 3 bits
	// and two zero bits of padding: a e i m q u y 4), in ASCII order.
	idLast     = [8]byte{'4', 'a', 'e', 'i', 'm', 'q', 'u', 'y'}
	idLastRank [256]byte
)

func init() {
	for i := range idRank {
		idRank[i], idLastRank[i] = 0xff, 0xff
	}
	for i, c := range idChar {
		idRank[c] = byte(i)
	}
	for i, c := range idLast {
		idLastRank[c] = byte(i)
	}
}

// idMemo keeps the stored values (idCodec.enc) of the last few ids it
// encoded: a commit's log rows name the same run, session, question and
// tool call again and again, and an encoded id is a blob boxed in an
// interface (two allocations). The values are never changed once made, so
// they are shared by every statement that binds them.
type idMemo struct {
	c    [8]idCodec
	id   [8]string
	v    [8]any
	next int
}

// enc is c.enc(id); a group commit member's (e.buf set, the writer
// goroutine) come from the writer's idMemo.
func (e executor) enc(c idCodec, id string) any {
	if e.buf != nil {
		return e.buf.r.ids.enc(c, id)
	}
	return c.enc(id)
}

// enc is c.enc(id), from the memo when it holds it.
func (m *idMemo) enc(c idCodec, id string) any {
	for i := range m.id {
		if m.id[i] == id && m.c[i] == c && m.v[i] != nil {
			return m.v[i]
		}
	}
	v := c.enc(id)
	m.c[m.next], m.id[m.next], m.v[m.next] = c, id, v
	m.next = (m.next + 1) % len(m.id)
	return v
}

// pack returns the 16 bytes of id when it has the codec's form.
func (c idCodec) pack(id string) ([16]byte, bool) {
	var out [16]byte
	if len(id) != len(c)+idChars || !strings.HasPrefix(id, string(c)) {
		return out, false
	}
	s := id[len(c):]
	// 25 characters of 5 bits and one of 3, most significant first: the
	// bits of the blob in the order of the characters, so memcmp order is
	// the string order.
	var hi, lo uint64
	for i := 0; i < idChars-1; i++ {
		r := idRank[s[i]]
		if r == 0xff {
			return out, false
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(r)
	}
	r := idLastRank[s[idChars-1]]
	if r == 0xff {
		return out, false
	}
	hi = hi<<3 | lo>>61
	lo = lo<<3 | uint64(r)
	binary.BigEndian.PutUint64(out[:8], hi)
	binary.BigEndian.PutUint64(out[8:], lo)
	return out, true
}

// enc is the value id is stored as: a 16-byte blob or the text.
func (c idCodec) enc(id string) any {
	if b, ok := c.pack(id); ok {
		return b[:]
	}
	return id
}

// unpack is the id whose blob b is.
func (c idCodec) unpack(b []byte) (string, error) {
	if len(b) != 16 {
		return "", fmt.Errorf("sqlite: a %sid of %d bytes (want 16)", string(c), len(b))
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	out := make([]byte, len(c)+idChars)
	copy(out, c)
	s := out[len(c):]
	s[idChars-1] = idLast[lo&7]
	lo = lo>>3 | hi<<61
	hi >>= 3
	for i := idChars - 2; i >= 0; i-- {
		s[i] = idChar[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out), nil
}

// dec is the id a stored value holds (enc's inverse): a blob is unpacked,
// text is the id; NULL is "".
func (c idCodec) dec(v any) (string, error) {
	switch v := v.(type) {
	case []byte:
		return c.unpack(v)
	case string:
		return v, nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("sqlite: a %sid stored as %T", string(c), v)
}

// into is a Scan destination that decodes the column's value into *dst.
func (c idCodec) into(dst *string) idDest { return idDest{c, dst} }

// idDest is a sql.Scanner for an id column (idCodec.into).
type idDest struct {
	c   idCodec
	dst *string
}

// Scan implements sql.Scanner.
func (d idDest) Scan(src any) error {
	s, err := d.c.dec(src)
	*d.dst = s
	return err
}

// idCompare orders two ids of codec c as SQLite orders their stored
// values: text ids (not of the codec's form) first, by bytes, then the
// others by their string (which their blobs' order is).
func (c idCodec) idCompare(a, b string) int {
	_, pa := c.pack(a)
	_, pb := c.pack(b)
	switch {
	case pa == pb:
		return strings.Compare(a, b)
	case pb:
		return -1
	}
	return 1
}
