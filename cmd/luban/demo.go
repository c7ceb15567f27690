package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/internal/demomcp"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/scripted"
)

// DemoMCP is `luban demo-mcp`: the built-in demo's MCP server on stdin and
// stdout (package internal/demomcp). `luban serve` starts it for the
// scripted demo; it is not a command a person runs, so the usage does not
// list it.
type DemoMCP struct {
	Stdout io.Writer
}

// Run serves until luban closes the server's stdin or ctx ends (SIGTERM);
// either is a normal end.
func (c *DemoMCP) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo-mcp", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban demo-mcp\n\nServes the MCP server of the built-in demo on stdin and stdout: one tool,\nplan_rollout, which asks a form. `luban serve` starts it when it plays the\nscripted demo without a config (docs/scenario.md); it is not run by hand.\n")
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	err := demomcp.Serve(ctx, versionString())
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// demoServer is the MCP server `luban serve` adds for the built-in demo:
// `<self> demo-mcp` over stdio, named demomcp.Name, when the model is the
// built-in scripted demo (--model scripted, or no model and no key) and
// there is no config file (a config keeps full control of its servers).
// ok is false otherwise, and when self (the path of this binary) is
// unknown.
func demoServer(self, spec string, file *config.File, p model.Provider) (config.MCPServer, bool) {
	if self == "" || file != nil || (spec != "" && spec != "scripted") {
		return config.MCPServer{}, false
	}
	if _, ok := p.(*scripted.Provider); !ok {
		return config.MCPServer{}, false
	}
	return config.MCPServer{Name: demomcp.Name, Command: self, Args: []string{"demo-mcp"}}, true
}
