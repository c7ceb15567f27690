//go:build lubantest

package agent

// InjectFault makes a Runner built from opts call f at named points of a
// step: "interaction_committed" (a question's pause committed),
// "answer_committed" (an answer committed), "model_stream" (a piece of
// streamed model text), "tool_running" (a tool is about to run),
// "deadline_committed" (a reminder or an escalation committed). It exists
// only in builds with the lubantest tag (the crash and replica tests); the
// shipped binary has no fault injection.
func InjectFault(opts *Options, f func(point string)) { opts.fault = f }

func (r *Runner) fault(point string) {
	if r.opts.fault != nil {
		r.opts.fault(point)
	}
}
