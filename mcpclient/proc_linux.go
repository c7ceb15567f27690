package mcpclient

import (
	"os/exec"
	"syscall"
)

// detach makes the stdio server's process die with luban's: the kernel
// sends it SIGTERM when luban exits, even on SIGKILL, so no server is left
// behind as an orphan.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
