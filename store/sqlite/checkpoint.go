package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"time"
)

// Checkpoints (docs/design.md §18, docs/performance.md "Checkpoints"). The
// writer never checkpoints: wal_autocheckpoint is off on the connections
// that write, and commitBatch only counts the frames its commits appended to
// the log (walIndex) and, every ckFrames of them, nudges the checkpointer.
// A round of the checkpointer, on its own connection, copies the log back
// in two steps:
//
//  1. PASSIVE copies every frame it can while taking neither SQLite's writer
//     lock nor any reader's: the store's transactions and reads go on
//     meanwhile, and append more frames.
//  2. RESTART copies the few frames appended during step 1 and waits for
//     the readers still inside the log, holding SQLite's writer lock, so
//     that the next commit writes the log from its start again (and
//     journal_size_limit cuts the file back). It takes the writer's turn
//     first (Store.wmu, which the writer goroutine holds for each batch),
//     so it neither sleeps in SQLite's busy handler waiting for a writer
//     that commits back to back nor makes the writer sleep in its own; a
//     batch waits for it at most as long as copying those few frames takes
//     (and readers' lingering, bounded by its short busy timeout, ckBusy).
//
// So the -wal file stays at about ckFrames pages under a steady load, and
// no commit waits for a whole log to be copied.
//
// Should readers linger in the log round after round (RESTART gives up),
// it grows; past half of WALLimit a round holds the store's readers and
// writer out of use for one TRUNCATE (truncateHeld). And should the log still pass WALLimit (the checkpointer
// falls behind a writer that readers keep from rewinding), the writer
// goroutine waits for a round between two batches (waitCheckpoint): the
// bound of last resort, and the only time a commit waits for a checkpoint.

// ckFramesMax is the most frames appended between two checkpoint rounds
// (16 MiB of log); a small WALLimit lowers it (ckFrames). Rounds far apart
// copy a hot page once for many commits that rewrote it: at SQLite's own
// autocheckpoint default (1,000 frames) a cycle ran 0.7-0.8x as fast, from
// the copying and the fsyncs alone.
const ckFramesMax = 4096

// ckBusy is the checkpointer connection's busy timeout, in milliseconds.
const ckBusy = 5

// walFrameBytes is a WAL frame of a 4 KiB page with its 24-byte header.
const walFrameBytes = 4096 + 24

// ckFrames is how many frames are appended before a checkpoint round,
// given the WAL limit: at most a quarter of it.
func ckFrames(walLimit int64) int64 { return max(8, min(ckFramesMax, walLimit/4/walFrameBytes)) }

// journalLimit is the journal_size_limit the writer cuts the -wal file back
// to when SQLite rewinds the log: two rounds of frames, at most half of the
// WAL limit.
func journalLimit(walLimit int64) int64 {
	return min(walLimit/2, 2*ckFrames(walLimit)*walFrameBytes)
}

// walIndex reads the WAL index header SQLite keeps at the start of the
// -shm file (https://www.sqlite.org/walformat.html, "The WAL-Index
// Header"): mxFrame, the last valid frame of the log, and the salts, which
// change whenever the log is rewound.
type walIndex struct {
	f *os.File
	b [48]byte
	// m maps the first shmMapBytes of the file, where the platform allows
	// (walindex_unix.go): a read is then a copy, not a system call.
	m []byte
}

// shmMapBytes is how much of the -shm file walIndex maps: one page, which
// holds the header. SQLite grows the file in 32 KB regions.
const shmMapBytes = 4096

// header returns mxFrame and the salts, and iChange, which every commit
// of any connection to the database adds one to; ok is false when the -shm file
// cannot be read or holds no initialized header (another VFS, another
// version), and the caller then counts commits instead of frames.
func (w *walIndex) header(path string) (mxFrame uint32, salts uint64, iChange uint32, ok bool) {
	if w.f == nil {
		f, err := os.Open(path + "-shm")
		if err != nil {
			return 0, 0, 0, false
		}
		w.f = f
	}
	if !w.read() {
		return 0, 0, 0, false
	}
	e := binary.NativeEndian
	if e.Uint32(w.b[0:4]) != 3007000 || w.b[12] != 1 {
		return 0, 0, 0, false
	}
	return e.Uint32(w.b[16:20]), e.Uint64(w.b[32:40]), e.Uint32(w.b[8:12]), true
}

func (w *walIndex) close() {
	w.unmap()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// countFrames runs on the writer goroutine after each commit: it adds the
// frames appended since the last call to Counts.WALFrames and nudges the
// checkpointer every ckFrames of them.
func (s *Store) countFrames() {
	mx, salts, _, ok := s.shm.header(s.path)
	var n int64
	switch {
	case !ok:
		n = 32 // no header to read: a typical commit's frames
	case salts != s.lastSalts:
		n = int64(mx) // the log was rewound: every frame is new
		s.rewinds.Add(1)
	default:
		n = int64(mx) - int64(s.lastFrame)
	}
	s.lastFrame, s.lastSalts = mx, salts
	s.logFrames.Store(int64(mx))
	if n <= 0 {
		return
	}
	s.walFrames.Add(n)
	s.sinceCk += n
	if s.sinceCk >= s.ckFrames {
		s.sinceCk = 0
		select {
		case s.ckNudge <- struct{}{}:
		default:
		}
	}
}

// overLimit reports whether the log, as the writer last read it, passed
// WALLimit.
func (s *Store) overLimit() bool { return int64(s.lastFrame)*walFrameBytes > s.walLimit }

// waitCheckpoint runs on the writer goroutine between two batches: it has
// the checkpointer run a round and waits for it, then reads the log's size
// again.
func (s *Store) waitCheckpoint() {
	done := make(chan struct{})
	select {
	case s.ckWait <- done:
		<-done
	case <-s.ckDone:
	}
	s.countFrames()
}

// walSize is the size of the -wal file in bytes (0 when it cannot be read).
func (s *Store) walSize() int64 {
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// checkpoint runs one PRAGMA wal_checkpoint on the checkpointer's
// connection and reports whether every frame of the log is now copied.
func (s *Store) checkpoint(mode string) (all bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var busy, log, done int64
	if err := s.cdb.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &log, &done); err != nil {
		return false
	}
	s.checkpoints.Add(1)
	return busy == 0 && log == done
}

// truncateHeld copies the whole WAL into the database and truncates it,
// holding the writer's connection (no transaction of this store is open or
// begins meanwhile) and every reader connection of the pool out of use
// (in-flight reads finish first, new ones wait): busy readers that keep
// taking the same read slots can keep SQLite from rewinding the log. Each
// step gives up after the busy timeout; the next round tries again. It is
// the bound of last resort (see above): the file passed half of WALLimit.
func (s *Store) truncateHeld() {
	ctx, cancel := context.WithTimeout(context.Background(), s.busy+time.Second)
	defer cancel()
	w, err := s.wdb.Conn(ctx)
	if err != nil {
		return
	}
	defer w.Close()
	held := make([]*sql.Conn, 0, s.readers)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range s.readers {
		c, err := s.rdb.Conn(ctx)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	if _, err := w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err == nil {
		s.truncations.Add(1)
	}
}

// checkpointLoop runs a checkpoint round whenever the writer has appended
// ckFrames frames, and every interval (writes made outside this store, a
// quiet store's last frames). See the top of this file.
func (s *Store) checkpointLoop(interval time.Duration) {
	defer close(s.ckDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopCk:
			// A last full pass so the WAL does not outlive the process.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = s.cdb.ExecContext(ctx, `PRAGMA busy_timeout(5000)`)
			_, _ = s.cdb.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			cancel()
			return
		case <-s.ckNudge:
		case <-t.C:
		case done := <-s.ckWait:
			s.round()
			close(done)
			continue
		}
		s.round()
	}
}

// round is one checkpoint round (see the top of this file).
func (s *Store) round() {
	s.checkpoint("PASSIVE")
	s.wmu.Lock()
	rewound := s.checkpoint("RESTART")
	s.wmu.Unlock()
	if rewound {
		return // the next commit writes the log from its start
	}
	if max(s.walSize(), s.logFrames.Load()*walFrameBytes) > s.walLimit/2 {
		s.truncateHeld()
	}
}
