package fingerprint

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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
// never reach the result). A server that answers neither yields an empty
// Server and the first error; one answer is enough.
func Probe(ctx context.Context, client *http.Client, base string, header http.Header) (*Server, error) {
	base = strings.TrimRight(base, "/")
	s := &Server{}
	var firstErr error
	get := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return resp, nil
	}
	if resp, err := get("/v1/models"); err != nil {
		firstErr = err
	} else {
		for _, h := range versionHeaders {
			if v := resp.Header.Get(h); v != "" {
				s.Version = h + ": " + v
				break
			}
		}
		var m struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		err := json.NewDecoder(io.LimitReader(resp.Body, maxProbeBody)).Decode(&m)
		resp.Body.Close()
		if err != nil {
			firstErr = fmt.Errorf("GET /v1/models: %w", err)
		}
		for _, d := range m.Data {
			s.Models = append(s.Models, d.ID)
		}
		slices.Sort(s.Models)
	}
	if resp, err := get("/metrics"); err != nil {
		if firstErr == nil && len(s.Models) == 0 {
			firstErr = err
		}
	} else {
		s.MetricFamilies = families(io.LimitReader(resp.Body, maxProbeBody))
		resp.Body.Close()
	}
	if len(s.Models) > 0 || len(s.MetricFamilies) > 0 || s.Version != "" {
		return s, nil
	}
	return s, firstErr
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
