package ssepump

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// log records what Run asked the writer to do, in order.
type log struct {
	mu  sync.Mutex
	ops []string
}

func (l *log) add(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
}

func (l *log) get() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.ops, " ")
}

func writer(l *log, stopAt string) Writer[string] {
	return Writer[string]{
		Item:  func(s string) (bool, bool) { l.add(s); return s == stopAt, true },
		Flush: func() bool { l.add("flush"); return true },
		Ping:  func() bool { l.add("ping"); return true },
		Fail:  func(err error) { l.add("fail:" + err.Error()) },
	}
}

// from yields what arrives on c until it is closed or ctx is done; an item
// "ERR" is yielded as an error.
func from(c <-chan string) func(ctx context.Context) iter.Seq2[string, error] {
	return func(ctx context.Context) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for {
				select {
				case s, ok := <-c:
					if !ok {
						return
					}
					if s == "ERR" {
						yield("", errors.New("broken"))
						return
					}
					if !yield(s, nil) {
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

func eventually(t *testing.T, l *log, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return l.get() == want }, 10*time.Second, time.Millisecond, "want %q", want)
}

// A burst the reader has already read is written with one flush; an item
// for which Item says stop ends the stream after a flush, and the source's
// context is cancelled.
func TestBurstAndStop(t *testing.T) {
	t.Parallel()
	c := make(chan string, 8)
	c <- "a"
	c <- "b"
	c <- "c"
	var l log
	ended := make(chan struct{})
	var srcCtx context.Context
	src := func(ctx context.Context) iter.Seq2[string, error] { srcCtx = ctx; return from(c)(ctx) }
	go func() {
		defer close(ended)
		Run(context.Background(), src, time.Hour, nil, writer(&l, "end"))
	}()
	// The three items may arrive one flush or several apart, but each
	// is written once, in order, and a flush follows the last.
	require.Eventually(t, func() bool { return strings.HasSuffix(l.get(), "c flush") }, 10*time.Second, time.Millisecond)
	require.Equal(t, "a b c", strings.Join(strings.Fields(strings.ReplaceAll(l.get(), "flush", "")), " "))
	c <- "end"
	c <- "never"
	<-ended
	require.True(t, strings.HasSuffix(l.get(), "c flush end flush"), l.get())
	require.Error(t, srcCtx.Err(), "the source's context is cancelled when Run returns")
}

// With nothing to write, a heartbeat is pinged; an error of the source is
// reported through Fail and ends the stream.
func TestHeartbeatAndFail(t *testing.T) {
	t.Parallel()
	c := make(chan string)
	var l log
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		Run(context.Background(), from(c), 5*time.Millisecond, nil, writer(&l, ""))
	}()
	require.Eventually(t, func() bool { return strings.HasPrefix(l.get(), "ping ping") }, 10*time.Second, time.Millisecond)
	c <- "ERR"
	<-ended
	require.True(t, strings.HasSuffix(l.get(), "fail:broken"), l.get())
}

// Closing done (shutdown) or cancelling ctx (the client left) ends Run
// without writing anything more.
func TestDoneAndCancel(t *testing.T) {
	t.Parallel()
	for _, viaDone := range []bool{true, false} {
		c := make(chan string)
		var l log
		done := make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			Run(ctx, from(c), time.Hour, done, writer(&l, ""))
		}()
		c <- "a"
		eventually(t, &l, "a flush")
		if viaDone {
			close(done)
		} else {
			cancel()
		}
		<-ended
		cancel()
		require.Equal(t, "a flush", l.get())
	}
}

// A failed write ends Run at once.
func TestWriteFails(t *testing.T) {
	t.Parallel()
	c := make(chan string, 2)
	c <- "a"
	c <- "b"
	var l log
	w := writer(&l, "")
	w.Item = func(s string) (bool, bool) { l.add(s); return false, false }
	Run(context.Background(), from(c), time.Hour, nil, w)
	require.Equal(t, "a", l.get())
}

// Start sends the SSE headers and status and flushes nothing itself.
func TestStart(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	Start(rec)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	require.Equal(t, "no", rec.Header().Get("X-Accel-Buffering"))
	require.False(t, rec.Flushed)
}
