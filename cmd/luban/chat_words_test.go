package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

// The page's relative time words (luban-react relativeTime.test.ts), the
// same boundaries and rounding.
func TestRelativeTimeMatchesThePage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		ago    time.Duration
		zh, en string
	}{
		{-time.Hour, "刚刚", "just now"},
		{0, "刚刚", "just now"},
		{59 * time.Second, "刚刚", "just now"},
		{time.Minute, "1分钟前", "1 minute ago"},
		{3*time.Minute + 59*time.Second, "3分钟前", "3 minutes ago"},
		{59 * time.Minute, "59分钟前", "59 minutes ago"},
		{time.Hour, "1小时前", "1 hour ago"},
		{23*time.Hour + 59*time.Minute, "23小时前", "23 hours ago"},
		{24 * time.Hour, "1天前", "1 day ago"},
		{6*24*time.Hour + 23*time.Hour, "6天前", "6 days ago"},
		{7 * 24 * time.Hour, "2026-11-24", "2026-11-24"},
	} {
		at := now.Add(-tc.ago)
		require.Equal(t, tc.zh, relativeTime(at, now, langZH), "%v", tc.ago)
		require.Equal(t, tc.en, relativeTime(at, now, langEN), "%v", tc.ago)
	}
	require.Empty(t, relativeTime(time.Time{}, now, langEN))
}

// A reply a stop cut short keeps its text in the terminal with the page's
// mark under it: live (the stop comes from another client while the chat
// follows the run) and when `--session` replays the transcript.
func TestChatMarksAStoppedReply(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	streaming := make(chan struct{})
	p := model.ProviderFunc{ProviderName: "test:stop", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		onDelta("床前明月光，")
		onDelta("疑是")
		close(streaming)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	srv := lubantest.Start(t, lubantest.Options{Provider: p})
	cl, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	stopped := make(chan error, 1)
	go func() {
		select {
		case <-streaming:
		case <-ctx.Done():
			stopped <- ctx.Err()
			return
		}
		list, err := cl.Sessions(ctx)
		if err == nil && len(list) == 1 {
			_, err = cl.Cancel(ctx, list[0].ID)
		}
		stopped <- err
	}()
	run := func(lang string, args ...string) string {
		var stdout bytes.Buffer
		input := ""
		if len(args) == 0 {
			input = "背一首诗\n"
		}
		c := &Chat{Stdin: strings.NewReader(input), Stdout: &stdout, Stderr: &stdout,
			Getenv: envOf(map[string]string{"LUBAN_URL": srv.URL, "LUBAN_AUTH_TOKEN": "test-token", "LUBAN_LANG": lang})}
		require.NoError(t, c.Run(ctx, args))
		return sessRE.ReplaceAllString(stdout.String(), "SESS")
	}
	live := run("zh")
	require.NoError(t, <-stopped)
	require.Contains(t, live, "> 背一首诗\n[会话 SESS]\n床前明月光，疑是\n（已停止）\n[已取消]\n", live)

	list, err := cl.Sessions(ctx)
	require.NoError(t, err)
	again := run("en", "--session", list[0].ID)
	require.Contains(t, again, "session SESS · 背一首诗 · cancelled · just now\n> 背一首诗\n床前明月光，疑是\n(stopped)\n> ", again)
}
