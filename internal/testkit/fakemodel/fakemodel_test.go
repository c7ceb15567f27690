package fakemodel_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
)

type turn struct{ text string }

type request struct{ model string }

func setup(t *testing.T) *fakemodel.Recorder[turn, request] {
	t.Helper()
	return fakemodel.NewRecorder[turn, request]("fakex")
}

// Queued turns first, in order; then the handler; without one, no answer.
// Every request is recorded and numbered, answered or not.
func TestRecorderNext(t *testing.T) {
	t.Parallel()
	rec := setup(t)
	rec.Push(turn{"a"}, turn{"b"})
	rec.SetHandler(func(r *request) turn { return turn{"echo " + r.model} })
	for i, want := range []string{"a", "b", "echo m3"} {
		seq, got, ok := rec.Next(&request{model: "m" + string(rune('1'+i))})
		require.True(t, ok)
		require.Equal(t, i+1, seq)
		require.Equal(t, want, got.text)
	}
	rec.SetHandler(nil)
	seq, _, ok := rec.Next(&request{model: "m4"})
	require.False(t, ok, "nothing queued, no handler")
	require.Equal(t, 4, seq)
	reqs := rec.Requests()
	require.Len(t, reqs, 4)
	require.Equal(t, "m4", reqs[3].model)
}

func TestRecorderWaitRequests(t *testing.T) {
	t.Parallel()
	rec := setup(t)
	done := make(chan []*request, 1)
	go func() {
		reqs, err := rec.WaitRequests(context.Background(), 2)
		if err == nil {
			done <- reqs
		}
		close(done)
	}()
	rec.Next(&request{model: "x"})
	rec.Next(&request{model: "y"})
	reqs := <-done
	require.Len(t, reqs, 2)
	require.Equal(t, "y", reqs[1].model)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := rec.WaitRequests(ctx, 3)
	require.ErrorIs(t, err, context.Canceled)
	require.EqualError(t, err, "fakex: 2 of 3 requests: context canceled")
}

func TestParseBody(t *testing.T) {
	t.Parallel()
	b := fakemodel.ParseBody([]byte(`{"model":"m","messages":[{"role":"user"},"junk"]}`))
	require.Equal(t, "m", b.Model)
	require.Equal(t, []map[string]any{{"role": "user"}}, b.Messages)
	require.NotNil(t, b.Object["messages"])
	require.Equal(t, fakemodel.Body{}, fakemodel.ParseBody([]byte(`[1]`)), "not an object")
}

func TestSplit(t *testing.T) {
	t.Parallel()
	require.Nil(t, fakemodel.Split("", 4))
	require.Equal(t, []string{"abcd", "ef"}, fakemodel.Split("abcdef", 4))
	zh := fakemodel.Split("中文", 2)
	require.Equal(t, []string{"中"[:2], "中"[2:] + "文"[:1], "文"[1:]}, zh, "cuts inside a character")
	require.Equal(t, "中文", strings.Join(zh, ""))
}

// Quote agrees with encoding/json on valid text and keeps a cut character's
// bytes raw, so the client can join them again.
func TestQuote(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `q"b\s`, "nl\n\r\t\x01", "中文😀"} {
		var back string
		require.NoError(t, json.Unmarshal([]byte(fakemodel.Quote(s)), &back), s)
		require.Equal(t, s, back)
	}
	cut := "中"[:2]
	require.Equal(t, `"`+cut+`"`, fakemodel.Quote(cut))
	std, err := json.Marshal(cut)
	require.NoError(t, err)
	require.NotEqual(t, string(std), fakemodel.Quote(cut), "encoding/json would replace the bytes by U+FFFD")
}

// CountDials counts each connection: with keep-alives off, every request
// dials; RequireSequentialReuse passes when the pooled client reuses one.
func TestCountDials(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	get := func(c *http.Client) error {
		resp, err := c.Get(srv.URL)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return errors.Join(err, resp.Body.Close())
	}

	tr := &http.Transport{DisableKeepAlives: true}
	dials := fakemodel.CountDials(t, tr)
	for range 3 {
		require.NoError(t, get(&http.Client{Transport: tr}))
	}
	require.Equal(t, int64(3), dials.Load())

	fakemodel.RequireSequentialReuse(t, 3, func(c *http.Client) func() error {
		return func() error { return get(c) }
	})
}
