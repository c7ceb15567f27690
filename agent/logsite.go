package agent

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"
)

// logSite is one call site of Runner.info: the program counter its
// records carry (a handler with AddSource prints it as the source), read
// from the stack on the first call and kept.
type logSite struct{ pc atomic.Uintptr }

// info logs msg with attrs at slog.LevelInfo, as r.log.LogAttrs does,
// except that the record's program counter is site's, read once, instead
// of walking the stack on every call (≈ 10 K instructions a line; the
// runner logs three lines a cycle). Each site is one call of info.
func (r *Runner) info(site *logSite, msg string, attrs ...slog.Attr) {
	ctx := context.Background()
	h := r.log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	pc := site.pc.Load()
	if pc == 0 {
		var pcs [1]uintptr
		runtime.Callers(2, pcs[:]) // skip runtime.Callers and info
		pc = pcs[0]
		site.pc.Store(pc)
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, msg, pc)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}
