//go:build lubantest

package people

// InjectFault makes a Dispatcher built from o call f at named points of the
// outbox: "webhook_fanout" (a committed feed entry is about to be fanned out
// into deliveries: none exists yet) and "webhook_send" (a claimed delivery,
// leased and with its webhook-id, is about to be sent). It exists only in
// builds with the lubantest tag (the crash tests); the shipped binary has
// no fault injection.
func InjectFault(o *DispatcherOptions, f func(point string)) { o.fault = f }

func (d *Dispatcher) fault(point string) {
	if d.o.fault != nil {
		d.o.fault(point)
	}
}
