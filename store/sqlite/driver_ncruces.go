//go:build ncruces && !mattn

package sqlite

import _ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"

// DriverName is the database/sql driver the store opens its files with:
// github.com/ncruces/go-sqlite3 (SQLite compiled to Go through Wasm), for the
// driver comparison of docs/performance.md.
const DriverName = "sqlite3"
