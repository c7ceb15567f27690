package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// instances is the PostgreSQL side of store.Store's HoldInstance and
// InstanceAlive: an advisory lock per instance id, held by one connection of
// its own, outside the pool (the server drops it when that connection
// ends, a killed process's included).
type instances struct {
	mu   sync.Mutex
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	held map[string]bool
}

// instanceKeys are the two int4 keys of instance id's advisory lock.
func instanceKeys(id string) (int32, int32) {
	sum := sha256.Sum256([]byte("luban-instance:" + id))
	return int32(binary.BigEndian.Uint32(sum[:4])), int32(binary.BigEndian.Uint32(sum[4:8]))
}

// HoldInstance implements store.Store.
func (s *Store) HoldInstance(ctx context.Context, id string) error {
	s.inst.mu.Lock()
	defer s.inst.mu.Unlock()
	if s.inst.held[id] {
		return nil
	}
	if s.inst.conn == nil {
		cfg := s.inst.cfg.Copy()
		cfg.Tracer = nil // not one of the store's round trips (RoundTrips)
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return fmt.Errorf("postgres: hold instance: %w", err)
		}
		s.inst.conn = c
	}
	k1, k2 := instanceKeys(id)
	if _, err := s.inst.conn.Exec(ctx, `SELECT pg_advisory_lock($1::int4, $2::int4)`, k1, k2); err != nil {
		return fmt.Errorf("postgres: hold instance: %w", err)
	}
	if s.inst.held == nil {
		s.inst.held = map[string]bool{}
	}
	s.inst.held[id] = true
	return nil
}

// InstanceAlive implements store.Store: a connection of any process holds
// the id's advisory lock in this database.
func (s *Store) InstanceAlive(ctx context.Context, id string) (bool, error) {
	s.inst.mu.Lock()
	held := s.inst.held[id]
	s.inst.mu.Unlock()
	if held {
		return true, nil
	}
	k1, k2 := instanceKeys(id)
	var alive bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = $1::int4::oid AND objid = $2::int4::oid AND objsubid = 2)`, k1, k2).Scan(&alive)
	if err != nil {
		return true, fmt.Errorf("postgres: instance alive: %w", err)
	}
	return alive, nil
}

// closeInstances ends the connection that holds the locks (so that they are
// dropped even if the pool would keep it).
func (s *Store) closeInstances() {
	s.inst.mu.Lock()
	defer s.inst.mu.Unlock()
	if s.inst.conn != nil {
		// Unlocked before the connection ends: the server drops a closed
		// connection's locks only once its backend has exited.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.inst.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
		cancel()
		_ = s.inst.conn.Close(context.Background())
		s.inst.conn = nil
	}
	s.inst.held = nil
}
