package sqlite

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// lockByte takes a write lock on byte off of f, owned by f's open file
// description (OFD): the kernel drops it when the process dies, and another
// Store of the same process (another description) sees it as held.
func lockByte(f *os.File, off int64) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: off, Len: 1}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// byteLocked reports whether another open file description holds a lock on
// byte off of f.
func byteLocked(f *os.File, off int64) (bool, error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: off, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); err != nil {
		return true, err
	}
	return lk.Type != unix.F_UNLCK, nil
}
