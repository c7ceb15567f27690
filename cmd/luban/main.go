// Command luban is the agent server: `luban serve` runs the HTTP API, the
// SSE streams and the embedded page (docs/design.md §8).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(Run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Run runs the luban command line with args and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		self, _ := os.Executable()
		err = (&Serve{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Self: self}).Run(ctx, args[1:])
	case "chat":
		err = (&Chat{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}).Run(ctx, args[1:])
	case "config":
		err = (&ConfigCmd{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}).Run(args[1:])
	case "migrate":
		err = (&Migrate{Stdout: stdout, Getenv: os.Getenv}).Run(ctx, args[1:])
	case "backup":
		err = (&Backup{Stdout: stdout, Getenv: os.Getenv}).Run(ctx, args[1:])
	case "verify":
		err = (&Verify{Stdin: os.Stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}).Run(args[1:])
	case "keys":
		err = (&Keys{Stdout: stdout, Getenv: os.Getenv}).Run(ctx, args[1:])
	case "health":
		err = (&Health{Stdout: stdout, Getenv: os.Getenv}).Run(ctx, args[1:])
	case "demo-mcp":
		// Started by serve for the built-in demo; not in the usage.
		err = (&DemoMCP{Stdout: stdout}).Run(ctx, args[1:])
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
	case "help", "-h", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "luban: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "luban:", err)
		var u *usageError
		if errors.As(err, &u) {
			fmt.Fprintf(stderr, "Try: luban %s --help\n", args[0])
			return 2
		}
		return 1
	}
	return 0
}

// version is the release version; goreleaser sets it with
// -ldflags "-X main.version=…". "dev" defers to the build information
// (versionString).
var version = "dev"

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usage(w io.Writer) {
	fmt.Fprint(w, `luban — an agent server whose heart is structured human-in-the-loop input

Usage:
  luban serve [flags]   run the HTTP/SSE server and the page (see luban serve --help)
  luban chat [flags]    talk to a server and answer its questions in the terminal (see luban chat --help)
  luban config check FILE   validate a configuration file without serving (docs/agents.md)
  luban migrate status|up [--db …]
                        show or apply the database migrations (see luban migrate --help)
  luban backup FILE [--db …]
                        write a consistent copy of a SQLite database, also while it serves
  luban verify [--keys FILE] FILE|-
                        check a signed decision receipt offline (exit 0, or 1 with the reason)
  luban keys rotate [--signing-keys FILE]
                        put a new signing key first; the old ones keep verifying
  luban health [--addr …]
                        exit 0 when a running server's /readyz answers 200 (container healthcheck)
  luban --version       print the version and commit
`)
}
