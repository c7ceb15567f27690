package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// straceRun is strace -c -f attached to the server process for the load.
type straceRun struct {
	cmd  *exec.Cmd
	file string
}

// startStrace attaches strace to every thread of pid, counting system calls.
func startStrace(pid int) (*straceRun, error) {
	f, err := os.CreateTemp("", "luban-bench-strace-*")
	if err != nil {
		return nil, err
	}
	f.Close()
	cmd := exec.Command("strace", "-c", "-f", "-qq", "-o", f.Name(), "-p", strconv.Itoa(pid))
	if err := cmd.Start(); err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("-strace: %w", err)
	}
	// strace attaches the threads one by one after it starts; give it time
	// so the load's first cycles are counted whole.
	time.Sleep(500 * time.Millisecond)
	return &straceRun{cmd: cmd, file: f.Name()}, nil
}

// syscallCounts is strace's table: calls by system call, and their sum.
type syscallCounts struct {
	total int64
	calls []syscallCount
}

type syscallCount struct {
	name  string
	calls int64
}

// stop detaches strace and reads its table.
func (s *straceRun) stop() (*syscallCounts, error) {
	defer os.Remove(s.file)
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	_ = s.cmd.Wait()
	f, err := os.Open(s.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseStrace(f)
}

// parseStrace reads strace -c's table (% time, seconds, usecs/call, calls,
// errors, syscall).
func parseStrace(r io.Reader) (*syscallCounts, error) {
	c := &syscallCounts{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		name := f[len(f)-1]
		n, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		if name == "total" {
			c.total = n
			continue
		}
		c.calls = append(c.calls, syscallCount{name, n})
	}
	slices.SortFunc(c.calls, func(a, b syscallCount) int { return cmp.Compare(b.calls, a.calls) })
	if c.total == 0 {
		return nil, fmt.Errorf("-strace: no table in strace's output")
	}
	return c, sc.Err()
}

func (c *syscallCounts) print(out io.Writer, cycles int) {
	n := float64(max(cycles, 1))
	fmt.Fprintf(out, "server process system calls per cycle (strace -c -f; its cost slows the load, so read no rate off this run): %.1f —", float64(c.total)/n)
	for i, s := range c.calls {
		if i == 10 {
			break
		}
		fmt.Fprintf(out, " %s %.1f", s.name, float64(s.calls)/n)
	}
	fmt.Fprintln(out)
}
