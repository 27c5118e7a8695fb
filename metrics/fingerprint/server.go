package fingerprint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/surgebench/surge/internal/outbound"
)

// Server is what a server says about itself.
type Server struct {
	// Models are the ids /v1/models lists, sorted.
	Models []string `json:"models,omitempty"`
	// Version is the first version-like response header found (Server,
	// X-Version, …), as sent.
	Version string `json:"version,omitempty"`
	// MetricFamilies are the metric names its Prometheus /metrics exposes
	// (names only: values change every second), sorted.
	MetricFamilies []string `json:"metric_families,omitempty"`
}

// versionHeaders are the response headers that name a server's build.
var versionHeaders = []string{"X-Version", "X-Server-Version", "Server", "X-Powered-By"}

// maxProbeBody bounds what Probe reads of each answer.
const maxProbeBody = 4 << 20

// Probe asks the server at base (scheme://host:port) what it is: GET
// /v1/models and GET /metrics, with header (credentials included, which
// never reach the result), each answer read within maxProbeBody. It
// returns what it learnt (an empty Server when nothing answered) and,
// joined, what went wrong (a status, an answer over the bound), nil when
// both answered.
func Probe(ctx context.Context, client *http.Client, base string, header http.Header) (*Server, error) {
	base = strings.TrimRight(base, "/")
	s := &Server{}
	var errs []error
	get := func(path string) ([]byte, http.Header) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			errs = append(errs, err)
			return nil, nil
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			errs = append(errs, fmt.Errorf("GET %s: %w", path, err))
			return nil, nil
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			errs = append(errs, fmt.Errorf("GET %s: %s", path, resp.Status))
			return nil, nil
		}
		b, err := outbound.ReadBody(ctx, resp, maxProbeBody, "its answer")
		if err != nil {
			errs = append(errs, fmt.Errorf("GET %s: %w", path, err))
			return nil, nil
		}
		return b, resp.Header
	}
	if b, h := get("/v1/models"); h != nil {
		for _, name := range versionHeaders {
			if v := h.Get(name); v != "" {
				s.Version = name + ": " + v
				break
			}
		}
		var m struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			errs = append(errs, fmt.Errorf("GET /v1/models: %w", err))
		}
		for _, d := range m.Data {
			s.Models = append(s.Models, d.ID)
		}
		slices.Sort(s.Models)
	}
	if b, h := get("/metrics"); h != nil {
		s.MetricFamilies = families(bytes.NewReader(b))
	}
	return s, errors.Join(errs...)
}

// Empty reports whether the server said nothing of itself.
func (s *Server) Empty() bool {
	return len(s.Models) == 0 && len(s.MetricFamilies) == 0 && s.Version == ""
}

// families lists the metric names of a Prometheus text exposition from its
// "# TYPE name kind" lines.
func families(r io.Reader) []string {
	var out []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "#" && f[1] == "TYPE" {
			out = append(out, f[2])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
