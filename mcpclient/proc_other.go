//go:build !linux

package mcpclient

import "os/exec"

// detach does nothing outside Linux: the server exits when its stdin closes.
func detach(cmd *exec.Cmd) {}
