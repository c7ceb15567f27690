//go:build unix

package sqlite

import (
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// read fills w.b with the first bytes of the -shm file: from a read-only
// shared mapping of its first page, made once the file holds that page,
// else (not yet, or the mapping failed) with pread. SQLite keeps the file
// mapped itself, so the page is the one its connections write.
func (w *walIndex) read() bool {
	if w.m == nil {
		if fi, err := w.f.Stat(); err == nil && fi.Size() >= shmMapBytes {
			if m, err := unix.Mmap(int(w.f.Fd()), 0, shmMapBytes, unix.PROT_READ, unix.MAP_SHARED); err == nil {
				w.m = m
			}
		}
	}
	if w.m != nil && w.copyMapped() {
		return true
	}
	n, err := w.f.ReadAt(w.b[:], 0)
	return n == len(w.b) && err == nil
}

// copyMapped copies the header from the mapping. It reports false, and
// drops the mapping, when the page is no longer backed by the file:
// SQLite truncates the -shm file when a connection opens the database with
// no other connection open, and a read past the end of a mapped file
// faults (SIGBUS), which SetPanicOnFault turns into a panic recovered here.
func (w *walIndex) copyMapped() (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			w.unmap()
			ok = false
		}
	}()
	copy(w.b[:], w.m)
	return true
}

// unmap drops the mapping, if any.
func (w *walIndex) unmap() {
	if w.m != nil {
		unix.Munmap(w.m)
		w.m = nil
	}
}
