package telemetry_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lubanhq/luban/telemetry"
)

// operationsDoc is docs/operations.md.
func operationsDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "operations.md"))
	require.NoError(t, err)
	return string(b)
}

// TestEveryMetricIsDocumented: the luban_ metrics the code defines (a
// collector's Name or a NewDesc anywhere in the repository's Go source) and
// the rows of the metrics table of docs/operations.md are the same set, so
// the table neither misses one (it said webhook deliveries were not counted
// while luban_webhook_deliveries_total counted them) nor lists one that is
// gone.
func TestEveryMetricIsDocumented(t *testing.T) {
	t.Parallel()
	defined := regexp.MustCompile(`(?:\bName:\s*|NewDesc\(\s*)"(luban_[a-z0-9_]+)"`)
	inCode := map[string]string{}
	require.NoError(t, filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range defined.FindAllStringSubmatch(string(b), -1) {
			inCode[m[1]] = path
		}
		return nil
	}))
	require.Contains(t, inCode, "luban_runs_started_total", "the scan finds the metrics of telemetry/metrics.go")

	row := regexp.MustCompile("(?m)^\\| `(luban_[a-z0-9_]+)` \\|")
	inDoc := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(operationsDoc(t), -1) {
		inDoc[m[1]] = true
	}
	var undocumented, gone []string
	for name, path := range inCode {
		if !inDoc[name] {
			undocumented = append(undocumented, name+" ("+path+")")
		}
	}
	for name := range inDoc {
		if _, ok := inCode[name]; !ok {
			gone = append(gone, name)
		}
	}
	sort.Strings(undocumented)
	sort.Strings(gone)
	require.Empty(t, undocumented, "metrics missing from the table of docs/operations.md")
	require.Empty(t, gone, "rows of docs/operations.md's metrics table that no code defines")
	require.NotContains(t, operationsDoc(t), "Webhook deliveries are\nnot counted")
}

// TestMetricsFormatIsTheDocumentedOne: GET /metrics answers the Prometheus
// text format by default, and it claims OpenMetrics in docs/operations.md
// only if a scraper asking for it (Prometheus' own Accept header) gets it.
func TestMetricsFormatIsTheDocumentedOne(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(telemetry.NewMetrics().Handler())
	defer srv.Close()
	get := func(accept string) string {
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		return resp.Header.Get("Content-Type")
	}
	require.True(t, strings.HasPrefix(get(""), "text/plain; version=0.0.4"), "the default is the Prometheus text format")
	line := regexp.MustCompile("(?m)^\\| `GET /metrics` \\|.*$").FindString(operationsDoc(t))
	require.NotEmpty(t, line, "docs/operations.md has a row for GET /metrics")
	// What Prometheus 3 sends when it may use OpenMetrics.
	const promAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	if strings.Contains(line, "OpenMetrics") {
		require.True(t, strings.HasPrefix(get(promAccept), "application/openmetrics-text"),
			"docs/operations.md says /metrics speaks OpenMetrics: %s", line)
	}
}

// TestDocumentedExemplarsAreThere: after a cycle with tracing on, every
// histogram docs/operations.md says carries exemplars has at least one in
// an OpenMetrics scrape, and none other does; and an Accept naming
// application/openmetrics-text without a version gets the Content-Type the
// document says.
func TestDocumentedExemplarsAreThere(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	c := start(t)
	c.run(t)

	doc := operationsDoc(t)
	para := regexp.MustCompile(`(?s)Only OpenMetrics carries \*\*exemplars\*\*:(.*?)\n\n`).FindStringSubmatch(doc)
	require.NotNil(t, para, "docs/operations.md lists the histograms with exemplars")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("`(luban_[a-z_]+)`").FindAllStringSubmatch(para[1], -1) {
		documented[m[1]] = true
	}
	require.NotEmpty(t, documented)

	get := func(accept string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, c.url+"/metrics", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		return resp
	}
	resp := get("application/openmetrics-text;version=1.0.0")
	withExemplars := map[string]bool{}
	dec := expfmt.NewDecoder(resp.Body, expfmt.ResponseFormat(resp.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		for _, m := range mf.GetMetric() {
			for _, b := range m.GetHistogram().GetBucket() {
				if b.GetExemplar() != nil {
					withExemplars[mf.GetName()] = true
				}
			}
		}
	}
	resp.Body.Close()
	require.Equal(t, documented, withExemplars, "the histograms with exemplars are those docs/operations.md names")

	resp = get("application/openmetrics-text")
	resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	v := regexp.MustCompile(`version=([0-9.]+)`).FindStringSubmatch(ct)
	require.NotNil(t, v, ct)
	require.True(t, strings.Contains(strings.Join(strings.Fields(doc), " "), "without a version gets `version="+v[1]+"`"), "docs/operations.md names the version an unversioned Accept gets (%s)", ct)
}
