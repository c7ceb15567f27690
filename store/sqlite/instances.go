package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"os"
	"sync"
)

// instances is the SQLite side of store.Store's HoldInstance and
// InstanceAlive: one byte of the file <db>-instances per instance id, locked
// by the process that holds the id (instances_linux.go).
type instances struct {
	mu   sync.Mutex
	f    *os.File        // opened by the first HoldInstance; nil for "memory"
	held map[string]bool // ids this Store holds
}

// instanceOffset is the byte of the lock file that stands for instance id.
func instanceOffset(id string) int64 {
	sum := sha256.Sum256([]byte("luban-instance:" + id))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 2)
}

// HoldInstance implements store.Store.
func (s *Store) HoldInstance(ctx context.Context, id string) error {
	s.inst.mu.Lock()
	defer s.inst.mu.Unlock()
	if s.inst.held == nil {
		s.inst.held = map[string]bool{}
	}
	if s.inst.held[id] {
		return nil
	}
	if !s.temp {
		if s.inst.f == nil {
			f, err := os.OpenFile(s.path+"-instances", os.O_RDWR|os.O_CREATE, 0o600)
			if err != nil {
				return err
			}
			s.inst.f = f
		}
		if err := lockByte(s.inst.f, instanceOffset(id)); err != nil {
			return err
		}
	}
	s.inst.held[id] = true
	return nil
}

// InstanceAlive implements store.Store. A "memory" database has no other
// process: only the ids this Store holds are alive.
func (s *Store) InstanceAlive(ctx context.Context, id string) (bool, error) {
	s.inst.mu.Lock()
	held := s.inst.held[id]
	s.inst.mu.Unlock()
	if held || s.temp {
		return held, nil
	}
	f, err := os.OpenFile(s.path+"-instances", os.O_RDWR, 0)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer f.Close()
	return byteLocked(f, instanceOffset(id))
}

func (s *Store) closeInstances() {
	s.inst.mu.Lock()
	defer s.inst.mu.Unlock()
	if s.inst.f != nil {
		s.inst.f.Close()
		s.inst.f = nil
	}
	s.inst.held = nil
}
