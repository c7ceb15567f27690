package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/telemetry"
)

// newDispatcher is the webhook dispatcher of `luban serve` for the
// `webhooks:` of the config file (none without a file). It runs even with no
// webhook configured, so that feed entries are marked as handled and a
// webhook added later gets only what happens after it (DESIGN §12).
func newDispatcher(st store.Store, file *config.File, instance string, log *slog.Logger, m *telemetry.Metrics) (*people.Dispatcher, error) {
	var hooks []people.Hook
	if file != nil {
		for _, w := range file.Webhooks {
			hooks = append(hooks, people.Hook{URL: w.URL, Secret: w.Secret, Events: w.Events})
		}
	}
	var reg prometheus.Registerer
	if m != nil {
		reg = m.Registry()
	}
	return people.NewDispatcher(people.DispatcherOptions{Store: st, Hooks: hooks, ID: instance, Logger: log, Metrics: reg})
}

// agentExists reports whether name is one of agents (a pending request of
// a run whose agent is gone is not resumable, DESIGN §4).
func agentExists(agents []*agent.Agent) func(string) bool {
	return func(name string) bool {
		for _, a := range agents {
			if a.Name == name {
				return true
			}
		}
		return false
	}
}
