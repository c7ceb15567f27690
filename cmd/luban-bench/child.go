package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
)

// serverSide is the luban server the client drives: in this process
// (-inprocess) or in a child process of its own (the default), where its
// CPU time, allocations, goroutines and system calls are its own and not the
// client's or the fake model's.
type serverSide interface {
	URL() string
	// counts snapshots the server process's counters.
	counts() (serverCounts, error)
	// settled collects garbage in the server process and reads its memory.
	settled() (rssPoint, error)
	// dbPath is the SQLite file ("" on PostgreSQL).
	dbPath() string
	close()
}

type localServer struct{ *lubanServer }

func (l localServer) URL() string                   { return l.url }
func (l localServer) counts() (serverCounts, error) { return l.lubanServer.counts(), nil }
func (l localServer) settled() (rssPoint, error)    { return settled() }
func (l localServer) dbPath() string                { return l.path }
func (l localServer) close()                        { l.lubanServer.close() }

// childServer is luban-bench run again with -child: it starts the server
// and answers one command a line on its standard input with one JSON line
// on its standard output ("counts", "settled"); it stops at end of input.
type childServer struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	url  string
	path string
	mu   sync.Mutex
}

func startChild(ctx context.Context, cfg *config, dbPath, modelURL string) (*childServer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-child", "-model-url", modelURL, "-sessions", strconv.Itoa(cfg.sessions), "-dir", cfg.dir}
	if cfg.db != "" {
		args = append(args, "-db", cfg.db)
	}
	if cfg.memprofile != "" {
		args = append(args, "-memprofile", cfg.memprofile)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &childServer{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := c.out.ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("server process: %w", err)
	}
	var hello struct{ URL, Path string }
	if err := json.Unmarshal([]byte(line), &hello); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("server process said %q", line)
	}
	c.url, c.path = hello.URL, hello.Path
	return c, nil
}

func (c *childServer) ask(cmd string, v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		return err
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("server process: %w", err)
	}
	if strings.HasPrefix(line, "error ") {
		return errors.New(strings.TrimSpace(strings.TrimPrefix(line, "error ")))
	}
	return json.Unmarshal([]byte(line), v)
}

func (c *childServer) URL() string    { return c.url }
func (c *childServer) dbPath() string { return c.path }
func (c *childServer) pid() int       { return c.cmd.Process.Pid }

func (c *childServer) counts() (serverCounts, error) {
	var n serverCounts
	err := c.ask("counts", &n)
	return n, err
}

func (c *childServer) settled() (rssPoint, error) {
	var p rssPoint
	err := c.ask("settled", &p)
	return p, err
}

// command asks the server process to do cmd (cpuprofile FILE,
// stopcpuprofile, memprofile FILE).
func (c *childServer) command(cmd string) error {
	var ok bool
	return c.ask(cmd, &ok)
}

func (c *childServer) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// serveChild is the -child process: the luban server, driven by the parent
// over loopback HTTP and asked for its counters on standard input.
func serveChild(ctx context.Context, cfg *config, in io.Reader, out io.Writer) error {
	l, err := startLuban(ctx, cfg.dir+"/luban.db", cfg.pgURL(), cfg.modelURL, cfg.sessions)
	if err != nil {
		return err
	}
	defer l.close()
	if cfg.memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	enc := json.NewEncoder(out)
	if err := enc.Encode(struct{ URL, Path string }{l.url, l.path}); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "cpuprofile":
			err = startCPUProfile(arg)
			if err == nil {
				err = enc.Encode(true)
			}
		case "stopcpuprofile":
			pprof.StopCPUProfile()
			err = enc.Encode(true)
		case "memprofile":
			err = writeAllocs(arg)
			if err == nil {
				err = enc.Encode(true)
			}
		case "counts":
			err = enc.Encode(l.counts())
		case "settled":
			var p rssPoint
			if p, err = settled(); err != nil {
				_, err = fmt.Fprintf(out, "error %v\n", err)
			} else {
				err = enc.Encode(p)
			}
		default:
			_, err = fmt.Fprintf(out, "error unknown command %q\n", sc.Text())
		}
		if err != nil {
			if _, werr := fmt.Fprintf(out, "error %s\n", strings.ReplaceAll(err.Error(), "\n", " ")); werr != nil {
				return werr
			}
		}
	}
	return sc.Err()
}

// startCPUProfile profiles this process's CPU into path until
// pprof.StopCPUProfile.
func startCPUProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	return nil
}

// writeAllocs writes the allocations this process made since it started
// (go tool pprof -sample_index alloc_objects).
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}
