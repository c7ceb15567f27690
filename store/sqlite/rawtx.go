package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// The group commit's transactions run on the writer's driver connection
// itself ((*sql.Conn).Raw), not through database/sql: a *sql.Tx costs, per
// statement, a *sql.Stmt wrapper and its connection bookkeeping, and per
// query a goroutine and a cancel context that watch the rows (a
// transaction's context is always cancellable), together about a sixth of a
// cycle's allocations. The driver's own interfaces (database/sql/driver)
// are all this needs, so every driver DriverName can name works the same.

// rowsReader is what a query's rows give the queries: *sql.Rows, and the
// writer's rawRows inside a group commit.
type rowsReader interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// rowScanner is what a one-row query gives: *sql.Row, and *rawRow.
type rowScanner interface {
	Scan(dest ...any) error
}

// rawConn is the writer's driver connection and the statements prepared on
// it, one per query text. It is only used by the writer goroutine, inside
// Raw.
type rawConn struct {
	dc    any // the driver.Conn the statements belong to
	prep  driver.ConnPrepareContext
	check driver.NamedValueChecker // nil when the driver has none
	stmts map[string]*rawStmt
	// gone counts, per query text, the statements run on connections
	// replaced since (bind): with stmts' counts, Store.WritesByQuery.
	gone map[string]int64
	args []driver.NamedValue
	c    *stmtCache // counts the statements (Store.Counts)
	// noOutbox is the Store's: when set, an owner's feed entry is
	// written fanned out (no webhook outbox row).
	noOutbox *atomic.Bool
	// row is the row rawTx.QueryRowContext returns, its values in vals:
	// reused by the next one, so a row must be scanned before the next
	// statement runs (every query of the store scans at once).
	row  rawRow
	vals []driver.Value
	// many holds the text of each multi-row INSERT manyQuery built, and
	// manyArgs the argument slice the next one reuses.
	many     map[manyKey]string
	manyArgs []any
	// ids are the values of the ids the log rows encoded last.
	ids idMemo
}

// rawStmt is a statement prepared on the writer's connection and the
// number of times rawTx ran it (not the group commit's SAVEPOINT, RELEASE
// and ROLLBACK). Only the writer goroutine, holding Store.wmu, touches n.
type rawStmt struct {
	driver.Stmt
	n int64
}

// manyKey names a multi-row INSERT: its head, one row's placeholders, the
// number of rows, and for a mixed one (manyQueryMixed) the other row's
// placeholders and which rows take them.
type manyKey struct {
	head, row, alt string
	n              int
	mask           uint64
}

// manyQuery returns head + " VALUES " + n copies of row, separated by
// ", ", built once per connection.
func (r *rawConn) manyQuery(head, row string, n int) string {
	k := manyKey{head: head, row: row, n: n}
	if q, ok := r.many[k]; ok {
		return q
	}
	q := head + " VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	if r.many == nil {
		r.many = map[manyKey]string{}
	}
	r.many[k] = q
	return q
}

// manyQueryMixed is manyQuery with row i (< 64) written as alt when bit i
// of mask is set.
func (r *rawConn) manyQueryMixed(head, row, alt string, n int, mask uint64) string {
	if mask == 0 {
		return r.manyQuery(head, row, n)
	}
	k := manyKey{head: head, row: row, alt: alt, n: n, mask: mask}
	if q, ok := r.many[k]; ok {
		return q
	}
	var b strings.Builder
	b.WriteString(head + " VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		if i < 64 && mask&(1<<i) != 0 {
			b.WriteString(alt)
		} else {
			b.WriteString(row)
		}
	}
	q := b.String()
	if r.many == nil {
		r.many = map[manyKey]string{}
	}
	r.many[k] = q
	return q
}

// bind makes dc the connection statements are prepared on; statements of
// another connection (database/sql replaced a bad one) are dropped.
func (r *rawConn) bind(dc any) error {
	if r.dc == dc && dc != nil {
		return nil
	}
	prep, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("sqlite: driver connection %T lacks PrepareContext", dc)
	}
	// The old connection is gone: its statements went with it.
	r.forget()
	r.dc, r.prep = dc, prep
	r.check, _ = dc.(driver.NamedValueChecker)
	return nil
}

// stmt returns q prepared on the connection.
func (r *rawConn) stmt(q string) (*rawStmt, error) {
	if st := r.stmts[q]; st != nil {
		return st, nil
	}
	ds, err := r.prep.PrepareContext(context.Background(), q)
	if err != nil {
		return nil, err
	}
	st := &rawStmt{Stmt: ds}
	r.stmts[q] = st
	return st, nil
}

// close finalizes every prepared statement.
func (r *rawConn) close() {
	for _, st := range r.stmts {
		st.Close()
	}
	r.forget()
}

// forget drops the prepared statements, keeping their counts in gone.
func (r *rawConn) forget() {
	for q, st := range r.stmts {
		if st.n > 0 {
			if r.gone == nil {
				r.gone = map[string]int64{}
			}
			r.gone[q] += st.n
		}
	}
	r.stmts = map[string]*rawStmt{}
}

// counts returns, per query text, the statements rawTx ran; the caller
// holds Store.wmu.
func (r *rawConn) counts(out map[string]int64) {
	for q, n := range r.gone {
		out[q] += n
	}
	for q, st := range r.stmts {
		if st.n > 0 {
			out[q] += st.n
		}
	}
}

// named converts args as database/sql does: the driver's NamedValueChecker
// first, then the default converter (driver.Valuer, int → int64, named
// string and integer types …). The slice is reused by the next statement;
// the drivers bind the values before ExecContext or QueryContext returns.
func (r *rawConn) named(args []any) ([]driver.NamedValue, error) {
	nv := r.args[:0]
	for i, a := range args {
		nv = append(nv, driver.NamedValue{Ordinal: i + 1, Value: a})
		if r.check != nil {
			err := r.check.CheckNamedValue(&nv[i])
			if err == nil {
				continue
			}
			if !errors.Is(err, driver.ErrSkip) {
				return nil, fmt.Errorf("sqlite: argument %d: %w", i+1, err)
			}
			nv[i].Value = a
		}
		if driver.IsValue(a) {
			continue
		}
		cv, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return nil, fmt.Errorf("sqlite: argument %d: %w", i+1, err)
		}
		nv[i].Value = cv
	}
	r.args = nv
	return nv, nil
}

// prepared returns q's statement on the connection with args bound; a
// counted statement adds one to the statement's count (rawStmt).
func (r *rawConn) prepared(q string, args []any, counted bool) (driver.Stmt, []driver.NamedValue, error) {
	st, err := r.stmt(q)
	if err != nil {
		return nil, nil, err
	}
	if counted {
		st.n++
	}
	nv, err := r.named(args)
	return st.Stmt, nv, err
}

// exec runs q, not counted (the group commit's own statements).
func (r *rawConn) exec(ctx context.Context, q string, args []any) (sql.Result, error) {
	return r.execStmt(ctx, q, args, false)
}

func (r *rawConn) execStmt(ctx context.Context, q string, args []any, counted bool) (sql.Result, error) {
	st, nv, err := r.prepared(q, args, counted)
	if err != nil {
		return nil, err
	}
	ex, ok := st.(driver.StmtExecContext)
	if !ok {
		return nil, fmt.Errorf("sqlite: driver statement %T lacks ExecContext", st)
	}
	return ex.ExecContext(ctx, nv)
}

// query runs q, counted.
func (r *rawConn) query(ctx context.Context, q string, args []any) (driver.Rows, error) {
	st, nv, err := r.prepared(q, args, true)
	if err != nil {
		return nil, err
	}
	qu, ok := st.(driver.StmtQueryContext)
	if !ok {
		return nil, fmt.Errorf("sqlite: driver statement %T lacks QueryContext", st)
	}
	return qu.QueryContext(ctx, nv)
}

// rawTx is a querier on the writer's connection inside the group commit's
// transaction. Like cachedTx, a statement runs without its context's
// cancellation, after a check that the context is not done: an interrupted
// statement would roll back every member of the shared transaction.
// buf, when not nil, holds the member's log rows (rowbuf.go): a statement
// that names their tables writes them first.
type rawTx struct {
	r   *rawConn
	buf *rowBuf
}

func (t rawTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := t.before(q); err != nil {
		return nil, err
	}
	t.r.c.n.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return t.r.execStmt(context.Background(), q, args, true)
}

// before writes the held rows q must see.
func (t rawTx) before(q string) error {
	if t.buf == nil {
		return nil
	}
	return t.buf.before(q)
}

func (t rawTx) QueryContext(ctx context.Context, q string, args ...any) (rowsReader, error) {
	if err := t.before(q); err != nil {
		return nil, err
	}
	t.r.c.n.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dr, err := t.r.query(context.Background(), q, args)
	if err != nil {
		return nil, err
	}
	return &rawRows{dr: dr, vals: make([]driver.Value, len(dr.Columns()))}, nil
}

// QueryRowContext runs the query and reads its first row at once, closing
// the rows, so the statement is free again whether or not Scan is called.
// The row is the connection's (rawConn.row): scan it before the next
// statement.
func (t rawTx) QueryRowContext(ctx context.Context, q string, args ...any) rowScanner {
	row := &t.r.row
	*row = rawRow{}
	if row.err = t.before(q); row.err != nil {
		return row
	}
	t.r.c.n.Add(1)
	if row.err = ctx.Err(); row.err != nil {
		return row
	}
	dr, err := t.r.query(context.Background(), q, args)
	if err != nil {
		row.err = err
		return row
	}
	n := len(dr.Columns())
	if cap(t.r.vals) < n {
		t.r.vals = make([]driver.Value, n)
	}
	vals := t.r.vals[:n]
	clear(vals)
	err = dr.Next(vals)
	if errors.Is(err, io.EOF) {
		err = sql.ErrNoRows
	}
	if err == nil {
		// The driver may reuse a []byte's memory once the rows close.
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = append([]byte(nil), b...)
			}
		}
	}
	if cerr := dr.Close(); err == nil && cerr != nil {
		err = cerr
	}
	row.vals, row.err = vals, err
	return row
}

// rawRow is a row QueryRowContext read; Scan reports sql.ErrNoRows for a
// query without rows, as *sql.Row does.
type rawRow struct {
	vals []driver.Value
	err  error
}

// Scan's []byte values are the row's own copies, handed to dest as they
// are (not copied again).
func (r *rawRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return scanValues(r.vals, dest, true)
}

// rawRows are the rows of a query on the writer's connection.
type rawRows struct {
	dr     driver.Rows
	vals   []driver.Value
	err    error
	closed bool
}

func (r *rawRows) Next() bool {
	if r.closed {
		return false
	}
	if err := r.dr.Next(r.vals); err != nil {
		if !errors.Is(err, io.EOF) {
			r.err = err
		}
		r.Close()
		return false
	}
	return true
}

func (r *rawRows) Scan(dest ...any) error {
	if r.closed {
		return errors.New("sqlite: Scan on closed rows")
	}
	return scanValues(r.vals, dest, false)
}

func (r *rawRows) Err() error { return r.err }

func (r *rawRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.dr.Close()
	if r.err == nil {
		r.err = err
	}
	return err
}

// scanValues stores a row's driver values in dest the way database/sql's
// Scan does for the destinations the queries use: strings, integers, bytes
// (copied), floats, booleans, the sql.Null* types and any sql.Scanner, and
// named types of those kinds; NULL only where the destination can hold it.
// A []byte value is copied unless owned says vals' []byte values belong to
// the caller already.
func scanValues(vals []driver.Value, dest []any, owned bool) error {
	if len(dest) != len(vals) {
		return fmt.Errorf("sqlite: Scan: expected %d destination arguments, not %d", len(vals), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, vals[i], owned); err != nil {
			return fmt.Errorf("sqlite: Scan: column %d: %w", i, err)
		}
	}
	return nil
}

func assign(dest any, src driver.Value, owned bool) error {
	switch d := dest.(type) {
	case *string:
		switch s := src.(type) {
		case string:
			*d = s
			return nil
		case []byte:
			*d = string(s)
			return nil
		case int64:
			*d = strconv.FormatInt(s, 10)
			return nil
		}
	case *int64:
		if s, ok := src.(int64); ok {
			*d = s
			return nil
		}
	case *int:
		if s, ok := src.(int64); ok {
			*d = int(s)
			return nil
		}
	case *[]byte:
		switch s := src.(type) {
		case nil:
			*d = nil
			return nil
		case []byte:
			if owned {
				*d = s
				return nil
			}
			*d = append([]byte(nil), s...)
			return nil
		case string:
			*d = []byte(s)
			return nil
		}
	case *json.RawMessage:
		return assign((*[]byte)(d), src, owned)
	case *bool:
		if s, ok := src.(int64); ok {
			*d = s != 0
			return nil
		}
		if s, ok := src.(bool); ok {
			*d = s
			return nil
		}
	case *any:
		if b, ok := src.([]byte); ok && !owned {
			src = append([]byte(nil), b...)
		}
		*d = src
		return nil
	case sql.Scanner:
		if b, ok := src.([]byte); ok && !owned {
			src = append([]byte(nil), b...)
		}
		return d.Scan(src)
	}
	return assignReflect(dest, src)
}

// assignReflect covers the rest: named string, integer, float and boolean
// types, and conversions between text and numbers.
func assignReflect(dest any, src driver.Value) error {
	dv := reflect.ValueOf(dest)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return fmt.Errorf("destination not a pointer: %T", dest)
	}
	if src == nil {
		return fmt.Errorf("converting NULL to %s is unsupported", dv.Elem().Kind())
	}
	e := dv.Elem()
	var text string
	switch s := src.(type) {
	case string:
		text = s
	case []byte:
		text = string(s)
	case int64:
		text = strconv.FormatInt(s, 10)
	case float64:
		text = strconv.FormatFloat(s, 'g', -1, 64)
	case bool:
		text = strconv.FormatBool(s)
	case time.Time:
		if e.Type() == reflect.TypeOf(time.Time{}) {
			e.Set(reflect.ValueOf(s))
			return nil
		}
		text = s.Format(time.RFC3339Nano)
	default:
		return fmt.Errorf("unsupported value %T", src)
	}
	switch e.Kind() {
	case reflect.String:
		e.SetString(text)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(text, 10, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting %q to %s: %w", text, e.Kind(), err)
		}
		e.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(text, 10, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting %q to %s: %w", text, e.Kind(), err)
		}
		e.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(text, e.Type().Bits())
		if err != nil {
			return fmt.Errorf("converting %q to %s: %w", text, e.Kind(), err)
		}
		e.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("converting %q to bool: %w", text, err)
		}
		e.SetBool(b)
	default:
		return fmt.Errorf("unsupported destination %T", dest)
	}
	return nil
}
