package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/tool"
)

// mcpStartWait bounds how long serve waits for the MCP servers' first
// connection attempts before it serves, so that the tools of the servers
// that are up are offered from the first run; a slower or down server
// keeps being retried in the background (docs/design.md §11).
const mcpStartWait = 20 * time.Second

// startMCP connects to servers (the config's mcp.servers, or the built-in
// demo's; none: a Manager with no servers) and waits up to mcpStartWait
// for their first attempts.
func startMCP(ctx context.Context, servers []config.MCPServer, reg *tool.Registry, log *slog.Logger) *mcpclient.Manager {
	m := mcpclient.New(servers, mcpclient.Options{Registry: reg, Logger: log, Version: version})
	if len(servers) == 0 {
		return m
	}
	ready := make(chan struct{})
	m.Start(context.WithoutCancel(ctx), ready)
	select {
	case <-ready:
	case <-time.After(mcpStartWait):
		log.Warn("mcp servers still connecting; serving without their tools for now")
	case <-ctx.Done():
	}
	for _, s := range m.Status() {
		log.Info("mcp server", "mcpServer", s.Name, "transport", s.Transport, "state", s.State, "tools", s.Tools)
	}
	return m
}

// mcpReadyChecks are /readyz's MCP entries, "mcp:<name>" each, with the
// server's Status as details. A server that is down is reported, not
// fatal: it does not make luban unready.
func mcpReadyChecks(m *mcpclient.Manager) []server.ReadyCheck {
	var out []server.ReadyCheck
	for _, name := range m.Names() {
		out = append(out, server.ReadyCheck{
			Name:     "mcp:" + name,
			Optional: true,
			Check:    func(context.Context) error { return m.Check(name) },
			Detail: func() any {
				for _, s := range m.Status() {
					if s.Name == name {
						return s
					}
				}
				return nil
			},
		})
	}
	return out
}
