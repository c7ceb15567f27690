package main

import (
	"context"
	"log/slog"
	"net"
	"strings"
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
//
// A server with oauth (docs/design.md §11, "OAuth") gets luban's callback
// at publicURL and keeps its grant in secrets, sealed (mcpclient.SecretFile
// beside the database).
func startMCP(ctx context.Context, servers []config.MCPServer, reg *tool.Registry, log *slog.Logger, publicURL string, secrets mcpclient.TokenStore) *mcpclient.Manager {
	m := mcpclient.New(servers, mcpclient.Options{Registry: reg, Logger: log, Version: version,
		RedirectURL: strings.TrimSuffix(publicURL, "/") + "/oauth/callback", Tokens: secrets})
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

// listenURL is the URL luban is reached at when nothing else says so: http://
// and the listen address, with localhost for an address that names no host
// (":8080", "0.0.0.0:8080").
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
