package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/telemetry"
)

// newDispatcher is the webhook dispatcher of `luban serve` for the
// `webhooks:` of the config file (none without a file) and the email and
// Slack channels of `notify:` (their rows share the outbox). It runs even with no
// webhook configured, so that feed entries are marked as handled and a
// webhook added later gets only what happens after it (docs/design.md §12).
//
// LUBAN_WEBHOOK_TIMEOUT (a Go duration, default 10s) bounds one attempt; a
// delivery being sent by a process that died is sent again after 3× it.
func newDispatcher(st store.Store, file *config.File, instance string, log *slog.Logger, m *telemetry.Metrics, getenv func(string) string, channels []people.Channel) (*people.Dispatcher, error) {
	var timeout time.Duration
	if v := getenv("LUBAN_WEBHOOK_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, &usageError{fmt.Sprintf("LUBAN_WEBHOOK_TIMEOUT=%q: not a positive Go duration (e.g. 10s)", v)}
		}
		timeout = d
	}
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
	o := people.DispatcherOptions{Store: st, Hooks: hooks, ID: instance, Logger: log, Metrics: reg, Timeout: timeout, Channels: channels}
	dispatcherHooks(getenv, &o, log)
	return people.NewDispatcher(o)
}
