package main

import (
	"fmt"
	"time"
)

// stoppedMark is the line printed under an assistant reply a stop cut short
// (api.MessageView.Stopped), the page's stoppedReply words.
func stoppedMark(lang chatLang) string { return lang.pick("（已停止）", "(stopped)") }

// relativeTime words how long before now t was, as the page's lists do
// (luban-react relativeTime, docs/design.md §24 "Times"): under a minute, or
// in the future, 刚刚 / just now; then whole minutes, hours and days, rounded
// down (3分钟前 / 3 minutes ago, 1小时前 / 1 hour ago, 6天前 / 6 days ago, never
// yesterday); from 7 days on the local date YYYY-MM-DD. A zero t is "".
func relativeTime(t, now time.Time, lang chatLang) string {
	if t.IsZero() {
		return ""
	}
	ago := now.Sub(t)
	unit := func(n int64, zh, one, many string) string {
		if lang == langZH {
			return fmt.Sprintf("%d%s前", n, zh)
		}
		if n == 1 {
			return fmt.Sprintf("1 %s ago", one)
		}
		return fmt.Sprintf("%d %s ago", n, many)
	}
	switch {
	case ago < time.Minute:
		return lang.pick("刚刚", "just now")
	case ago < time.Hour:
		return unit(int64(ago/time.Minute), "分钟", "minute", "minutes")
	case ago < 24*time.Hour:
		return unit(int64(ago/time.Hour), "小时", "hour", "hours")
	case ago < 7*24*time.Hour:
		return unit(int64(ago/(24*time.Hour)), "天", "day", "days")
	}
	return t.Local().Format("2006-01-02")
}
