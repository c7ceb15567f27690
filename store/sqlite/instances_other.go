//go:build !linux

package sqlite

import "os"

// lockByte holds nothing where OFD locks are missing.
func lockByte(*os.File, int64) error { return nil }

// byteLocked cannot tell where OFD locks are missing: every instance is
// taken for alive (the lease decides, as before).
func byteLocked(*os.File, int64) (bool, error) { return true, nil }
