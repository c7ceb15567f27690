package postgres

import (
	"context"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// PostgreSQL text cannot hold U+0000 or bytes that are not UTF-8, which
// SQLite stores as given; every store must accept the same strings (the
// conformance suite checks it). So the driver escapes what PostgreSQL refuses
// on the way in and restores it on the way out, byte for byte:
//
//	NUL             -> U+FDD0 '0'
//	U+FDD0          -> U+FDD0 'E'
//	a non-UTF-8 byte -> U+FDD0 'x' and two lower-case hex digits
//
// U+FDD0 is a Unicode noncharacter, reserved for a program's internal use and
// never exchanged as text, so every other string is stored unchanged and
// equality (WHERE, unique indexes) keeps its meaning. The escape is applied
// to every string argument and every scanned string by textQuerier, below the
// SQL, so the queries need not know about it. JSON columns pass through it
// too; encoding/json already writes NUL as \u0000 there.
const textEscape = '\uFDD0'

const textEscapeUTF8 = "\uFDD0"

// encodeText returns s with NUL, U+FDD0 and invalid UTF-8 escaped; a string
// without them is returned as is.
func encodeText(s string) string {
	if strings.IndexByte(s, 0) < 0 && !strings.Contains(s, textEscapeUTF8) && utf8.ValidString(s) {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(textEscapeUTF8)
			b.WriteByte('x')
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&15])
		case r == 0:
			b.WriteString(textEscapeUTF8)
			b.WriteByte('0')
		case r == textEscape:
			b.WriteString(textEscapeUTF8)
			b.WriteByte('E')
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// decodeText reverses encodeText. An escape it does not recognise (text
// written by something else) is kept as it is.
func decodeText(s string) string {
	if !strings.Contains(s, textEscapeUTF8) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for {
		i := strings.Index(s, textEscapeUTF8)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		rest := s[i+len(textEscapeUTF8):]
		switch {
		case strings.HasPrefix(rest, "0"):
			b.WriteByte(0)
			s = rest[1:]
		case strings.HasPrefix(rest, "E"):
			b.WriteString(textEscapeUTF8)
			s = rest[1:]
		case len(rest) >= 3 && rest[0] == 'x' && isLowerHex(rest[1]) && isLowerHex(rest[2]):
			b.WriteByte(unhex(rest[1])<<4 | unhex(rest[2]))
			s = rest[3:]
		default:
			b.WriteString(textEscapeUTF8)
			s = rest
		}
	}
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// textQuerier is a querier whose string arguments are encoded (encodeText)
// and whose scanned strings are decoded (decodeText).
type textQuerier struct{ q querier }

func (t textQuerier) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return t.q.Exec(ctx, sql, encodeArgs(args)...)
}

func (t textQuerier) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := t.q.Query(ctx, sql, encodeArgs(args)...)
	if rows == nil {
		return nil, err
	}
	return textRows{rows}, err
}

func (t textQuerier) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return textRow{t.q.QueryRow(ctx, sql, encodeArgs(args)...)}
}

// encodeArgs encodes strings, named string types and slices of them; other
// arguments are passed on unchanged. args itself is not modified.
func encodeArgs(args []any) []any {
	var out []any
	for i, a := range args {
		enc, changed := encodeArg(a)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = enc
	}
	if out == nil {
		return args
	}
	return out
}

func encodeArg(a any) (any, bool) {
	switch v := a.(type) {
	case nil, bool, int, int32, int64, float64, pgtype.Timestamptz, time.Time:
		return a, false
	case string:
		// a itself when unchanged: boxing e again would allocate.
		if e := encodeText(v); e != v {
			return e, true
		}
		return a, false
	case []string:
		var out []string
		for i, s := range v {
			if e := encodeText(s); e != s {
				if out == nil {
					out = append([]string(nil), v...)
				}
				out[i] = e
			}
		}
		if out == nil {
			return a, false
		}
		return out, true
	}
	rv := reflect.ValueOf(a)
	if rv.Kind() == reflect.String {
		s := rv.String()
		if e := encodeText(s); e != s {
			return e, true
		}
	}
	return a, false
}

// textArray is ss as a PostgreSQL array literal, every element quoted
// (so "NULL" and "" are strings), for a $n::text[] parameter: pgx sends a
// string argument in text format as it is, so the array costs one string,
// not a boxed value per element. The literal goes through encodeArgs like
// any string, which escapes it as it would escape each element (the
// escape sequences hold no quote or backslash).
func textArray(ss []string) string {
	n := 2 + 3*len(ss)
	for _, s := range ss {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for {
			j := strings.IndexAny(s, `"\`)
			if j < 0 {
				break
			}
			b.WriteString(s[:j])
			b.WriteByte('\\')
			b.WriteByte(s[j])
			s = s[j+1:]
		}
		b.WriteString(s)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// decodeDests decodes the strings a Scan wrote.
func decodeDests(dest []any) {
	for _, d := range dest {
		switch v := d.(type) {
		case *string:
			*v = decodeText(*v)
		case *pgtype.Text:
			v.String = decodeText(v.String)
		}
	}
}

type textRow struct{ row pgx.Row }

func (r textRow) Scan(dest ...any) error {
	if err := r.row.Scan(dest...); err != nil {
		return err
	}
	decodeDests(dest)
	return nil
}

type textRows struct{ pgx.Rows }

func (r textRows) Scan(dest ...any) error {
	if err := r.Rows.Scan(dest...); err != nil {
		return err
	}
	decodeDests(dest)
	return nil
}

func (r textRows) Values() ([]any, error) {
	vs, err := r.Rows.Values()
	for i, v := range vs {
		if s, ok := v.(string); ok {
			vs[i] = decodeText(s)
		}
	}
	return vs, err
}
