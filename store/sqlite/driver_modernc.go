//go:build !ncruces && !mattn

package sqlite

import _ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

// DriverName is the database/sql driver the store opens its files with:
// "sqlite", modernc.org/sqlite (pure Go, the default). Build tag ncruces
// selects github.com/ncruces/go-sqlite3 and build tag mattn (with cgo)
// github.com/mattn/go-sqlite3 instead, for the driver comparison of
// docs/performance.md; DSNs are "file:" URIs with _pragma and _txlock
// parameters for all three.
const DriverName = "sqlite"
