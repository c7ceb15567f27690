//go:build !linux

package opstest

import "os/exec"

// dieWithTest does nothing where the kernel cannot tie a child's life to
// its parent's.
func dieWithTest(*exec.Cmd) {}

// removeImageBuild has nothing to remove: the tests of the container
// image's binary run on Linux only.
func removeImageBuild() {}
