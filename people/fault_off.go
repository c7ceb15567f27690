//go:build !lubantest

package people

// fault marks a named point of the outbox where builds with the lubantest
// tag inject faults (InjectFault); in every other build it does nothing.
func (d *Dispatcher) fault(string) {}
