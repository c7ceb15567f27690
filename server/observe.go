package server

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
)

// observe wraps h with what every request gets (docs/design.md §14): an
// OpenTelemetry server span (named "METHOD route"; the global tracer
// provider), the HTTP metrics when Options.Metrics is set, and one access
// log line at level info with the method, the path without its query, the
// status, the duration and the bytes written — never a header, a token or a
// body. SSE streams are logged when they end. While no global tracer or
// meter provider is installed (telemetry.SetupTracing without an endpoint),
// the span would be a no-op: the request skips otelhttp altogether (its
// attributes, wrappers and metric sets cost ≈ 35 allocations a request).
func (s *Server) observe(h http.Handler) http.Handler {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		d := time.Since(start)
		if m := s.opts.Metrics; m != nil {
			m.ObserveHTTP(r.Context(), r.Method, s.route(r), rec.status, d)
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.String("duration", d.Round(time.Microsecond).String()), slog.Int64("bytes", rec.bytes))
	})
	traced := otelhttp.NewHandler(inner, "http",
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + s.route(r) }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			return r.URL.Path != "/metrics" && r.URL.Path != "/livez" && r.URL.Path != "/readyz"
		}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !otelInstalled() {
			inner.ServeHTTP(w, r)
			return
		}
		traced.ServeHTTP(w, r)
	})
}

// The global providers as the process started: OpenTelemetry's delegating
// no-ops, until otel.SetTracerProvider or otel.SetMeterProvider replaces
// them.
var (
	startTracerProvider = otel.GetTracerProvider()
	startMeterProvider  = otel.GetMeterProvider()
)

// otelInstalled reports whether a global tracer or meter provider has been
// installed since the process started.
func otelInstalled() bool {
	return otel.GetTracerProvider() != startTracerProvider || otel.GetMeterProvider() != startMeterProvider
}

// route is the pattern that serves r ("GET /api/sessions/{id}", "/"): a
// label of bounded cardinality that never holds an id.
func (s *Server) route(r *http.Request) string {
	var pat string
	if strings.HasPrefix(r.URL.Path, "/api/") {
		_, pat = s.api.Handler(r)
	} else {
		_, pat = s.mux.Handler(r)
	}
	if pat == "" {
		return "other"
	}
	// "GET /api/x" patterns keep their method; the label has it already.
	if _, p, ok := strings.Cut(pat, " "); ok {
		return p
	}
	return pat
}

// recorder notes the status and the bytes of a response. Unwrap lets
// http.ResponseController reach the connection (flushes and deadlines of
// SSE streams).
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *recorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// pageRoute reports whether path belongs to the page (docs/design.md §14): "/",
// "/s/{sessionId}", "/q/{requestId}", "/inbox", or a file such as
// /assets/index-….js or /favicon.svg (the page handler answers 404 for a
// file it does not have). Every other path is 404, never the page.
func pageRoute(path string) bool {
	switch {
	case path == "/" || path == "/inbox" || path == "/index.html":
		return true
	case strings.HasPrefix(path, "/s/"), strings.HasPrefix(path, "/q/"):
		id := path[3:]
		return id != "" && !strings.Contains(id, "/")
	case strings.HasPrefix(path, "/assets/"):
		return true
	}
	last := path[strings.LastIndex(path, "/")+1:]
	return strings.Count(path, "/") == 1 && strings.Contains(last, ".") && !strings.HasPrefix(last, ".")
}

// notFound is the plain 404 of a path outside the page and the API.
func notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	http.Error(w, "404 page not found", http.StatusNotFound)
}
