package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
)

// maxScrapeBytes bounds a /metrics body: vLLM's is ≈ 100 KiB with its
// histograms, a DCGM exporter's for 8 GPUs ≈ 60 KiB.
const maxScrapeBytes = 16 << 20

// acceptHeader asks for the classic text format (both the Python and the Go
// Prometheus clients honour it; OpenMetrics would need another parser).
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// ErrNotPrometheus marks an endpoint that answered with something other
// than Prometheus text (an HTML page, JSON, garbage).
var ErrNotPrometheus = errors.New("not Prometheus text")

// HTTPError is a /metrics endpoint answering with a non-2xx status.
type HTTPError struct {
	StatusCode int
	Status     string
}

// Error reports the status line.
func (e *HTTPError) Error() string { return "HTTP " + e.Status }

// scrape fetches url and parses it as Prometheus text.
func scrape(ctx context.Context, client *http.Client, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		switch {
		case mt == "text/html", mt == "application/json", strings.HasPrefix(mt, "image/"):
			return nil, fmt.Errorf("%w (Content-Type %s)", ErrNotPrometheus, mt)
		}
	}
	body, err := outbound.ReadBody(ctx, resp, maxScrapeBytes, "the answer")
	var tl *bounded.TooLargeError
	if errors.As(err, &tl) {
		return nil, fmt.Errorf("%w: %w", ErrNotPrometheus, err)
	}
	if err != nil {
		return nil, err
	}
	return parseText(bytes.NewReader(body))
}

// parseText parses Prometheus text exposition format.
func parseText(r io.Reader) (fams map[string]*dto.MetricFamily, err error) {
	defer func() {
		// The parser has panicked on odd input in past releases; a
		// scrape must never take the run down.
		if p := recover(); p != nil {
			fams, err = nil, fmt.Errorf("%w (parser panic: %v)", ErrNotPrometheus, p)
		}
	}()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err = p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", ErrNotPrometheus, err)
	}
	return fams, nil
}

// value is a metric's number whatever its type: histograms and summaries
// give their sum (TGI's token counts are histograms).
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Histogram != nil:
		return m.Histogram.GetSampleSum()
	case m.Summary != nil:
		return m.Summary.GetSampleSum()
	}
	return math.NaN()
}

// label returns the value of the label named name, or "".
func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}
