//go:build !unix

package sqlite

// read fills w.b with the first bytes of the -shm file (pread).
func (w *walIndex) read() bool {
	n, err := w.f.ReadAt(w.b[:], 0)
	return n == len(w.b) && err == nil
}

// unmap does nothing: nothing is mapped on this platform.
func (w *walIndex) unmap() {}
