//go:build !lubantest

package agent

// fault marks a named point of a step where builds with the lubantest tag
// inject faults (InjectFault); in every other build it does nothing.
func (r *Runner) fault(string) {}
