//go:build mattn && cgo

package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"strings"

	mattn "github.com/mattn/go-sqlite3"
)

// DriverName is the database/sql driver the store opens its files with:
// github.com/mattn/go-sqlite3 (cgo), a reference for the driver comparison
// of docs/performance.md, never the default.
const DriverName = "luban-mattn"

func init() { sql.Register(DriverName, mattnDriver{}) }

// mattnDriver opens DSNs of the form the other drivers take: mattn has no
// _pragma parameter, so each is run on the new connection instead.
type mattnDriver struct{}

func (mattnDriver) Open(dsn string) (driver.Conn, error) {
	name, query, _ := strings.Cut(dsn, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: dsn: %w", err)
	}
	pragmas := q["_pragma"]
	q.Del("_pragma")
	c, err := (&mattn.SQLiteDriver{}).Open(name + "?" + q.Encode())
	if err != nil {
		return nil, err
	}
	ex := c.(driver.ExecerContext)
	for _, p := range pragmas {
		if _, err := ex.ExecContext(context.Background(), "PRAGMA "+p, nil); err != nil {
			c.Close()
			return nil, fmt.Errorf("sqlite: PRAGMA %s: %w", p, err)
		}
	}
	return c, nil
}
