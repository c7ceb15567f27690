package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/lubanhq/luban/telemetry"
)

// parseFlags parses args with fs. --help prints the usage on stdout and
// returns flag.ErrHelp (exit 0); a bad flag returns a *usageError whose
// message Run prints on stderr (exit 2). Nothing else is printed.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	return parseFlagsArgs(fs, args, stdout, 0)
}

// parseFlagsArgs is parseFlags allowing up to n arguments after the flags
// (fs.Args).
func parseFlagsArgs(fs *flag.FlagSet, args []string, stdout io.Writer, n int) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return flag.ErrHelp
	}
	if err != nil {
		return &usageError{err.Error()}
	}
	if fs.NArg() > n {
		return &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(n))}
	}
	return nil
}

// envReader reads the environment twins of flags (docs/design.md §8). A value that
// does not parse is remembered, not replaced by the default: Err names
// every such variable, and the command refuses to start.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (e *envReader) str(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

func (e *envReader) dur(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: not a duration (use a number with a unit, such as 30s, 15m or 24h)", name, v))
		return def
	}
	return d
}

func (e *envReader) days(name string, def days) days {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	var d days
	if err := d.Set(v); err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: %v", name, v, err))
		return def
	}
	return d
}

// Err is every environment variable that did not parse, or nil.
func (e *envReader) Err() error {
	if len(e.errs) == 0 {
		return nil
	}
	return &usageError{errors.Join(e.errs...).Error()}
}

// days is a retention period: a Go duration ("720h") or a whole number of
// days ("30d"); "0" turns the retention off (keep forever).
type days time.Duration

// String implements flag.Value.
func (d *days) String() string {
	if d == nil {
		return "0"
	}
	t := time.Duration(*d)
	if t%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(t/(24*time.Hour)), 10) + "d"
	}
	return t.String()
}

// Set implements flag.Value.
func (d *days) Set(v string) error {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 {
			return errors.New("not a number of days (use 30d, 720h, or 0 to keep forever)")
		}
		*d = days(time.Duration(i) * 24 * time.Hour)
		return nil
	}
	t, err := time.ParseDuration(v)
	if err != nil || t < 0 {
		return errors.New("not a retention period (use 30d, 720h, or 0 to keep forever)")
	}
	*d = days(t)
	return nil
}

// newLogger is the process logger: format "text" or "json" on w, at level
// "debug", "info", "warn" or "error". Records carry the trace and span ids
// of the context they are logged with (telemetry.LogHandler).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, &usageError{fmt.Sprintf("--log-level (LUBAN_LOG_LEVEL) %q: use debug, info, warn or error", level)}
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, &usageError{fmt.Sprintf("--log-format (LUBAN_LOG_FORMAT) %q: use text or json", format)}
	}
	return slog.New(telemetry.LogHandler(h)), nil
}

// versionString is `luban --version`: formatVersion of this binary's
// build information.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	return formatVersion(version, bi, ok)
}

// formatVersion is "luban <version>[ commit <revision>[ (modified)][
// <time>]]" (docs/operations.md, "Command line"): the version set with
// -ldflags "-X main.version=…" (v, unless "dev"), else the module version
// the toolchain stamped (a tag for `go install …@vX`, a pseudo-version for a
// build in a git checkout, "(devel)" without version control information),
// then the VCS commit, whether the tree was modified, and the commit time.
func formatVersion(v string, bi *debug.BuildInfo, ok bool) string {
	commit, dirty, when := "", false, ""
	if ok {
		if v == "dev" && bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			case "vcs.time":
				when = s.Value
			}
		}
	}
	out := "luban " + v
	if commit != "" {
		out += " commit " + commit
		if dirty {
			out += " (modified)"
		}
		if when != "" {
			out += " " + when
		}
	}
	return out
}
