package preflight

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/surgebench/surge/internal/outbound"
)

// familyProbes are the GETs that name a server, most telling first: each
// path is one family's own (SGLang's server info, TGI's info, llama.cpp's
// props, vLLM's version), and its answer must have the family's fields.
var familyProbes = []struct {
	path string
	fam  Family
}{
	{"/get_server_info", SGLang},
	{"/info", TGI},
	{"/props", LlamaCpp},
	{"/version", VLLM},
}

// familyWait bounds each family GET.
const familyWait = 500 * time.Millisecond

// family asks the server's root for the GETs that name a family, until
// one answers as its family does or the check's time runs out.
func family(ctx context.Context, c *http.Client, u *url.URL, h http.Header, r *Result) {
	root := url.URL{Scheme: u.Scheme, Host: u.Host}
	for _, p := range familyProbes {
		if ctx.Err() != nil {
			r.Notes = append(r.Notes, "no time left to ask the server's family")
			return
		}
		root.Path = p.path
		body, ok := get(ctx, c, root.String(), h)
		if !ok {
			continue
		}
		if fam, version, ok := parseFamily(p.path, body); ok {
			r.Family, r.FamilyFrom, r.Version = fam, "GET "+p.path, version
			return
		}
	}
}

// maxFamilyBody bounds a family GET's answer (a server's facts are a few
// KiB).
const maxFamilyBody = 1 << 20

// get fetches url within familyWait (ok false for an error or a non-200).
func get(ctx context.Context, c *http.Client, url string, h http.Header) ([]byte, bool) {
	ctx, cancel := context.WithTimeout(ctx, familyWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, false
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, false
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, false
	}
	b, err := outbound.ReadBody(ctx, resp, maxFamilyBody, "GET "+req.URL.Path)
	return b, err == nil
}

// parseFamily reads the answer to a family GET: it names the family only
// with that family's own fields, since a proxy or another server may
// answer the same path.
//
//   - SGLang's /get_server_info: its server args (model_path,
//     tp_size) and a version;
//   - TGI's /info: model_id with max_input_tokens or max_total_tokens, and
//     its version;
//   - llama.cpp's /props: default_generation_settings and total_slots
//     (with build_info in newer builds);
//   - vLLM's /version: an object with only a version.
func parseFamily(path string, body []byte) (Family, string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return Unknown, "", false
	}
	str := func(k string) string {
		var s string
		if json.Unmarshal(m[k], &s) != nil {
			return ""
		}
		return s
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				return false
			}
		}
		return true
	}
	switch path {
	case "/get_server_info":
		if has("model_path", "tp_size") {
			return SGLang, str("version"), true
		}
	case "/info":
		if has("model_id") && (has("max_input_tokens") || has("max_total_tokens") || has("max_input_length")) {
			return TGI, str("version"), true
		}
	case "/props":
		if has("default_generation_settings", "total_slots") {
			return LlamaCpp, str("build_info"), true
		}
	case "/version":
		if v := str("version"); v != "" && len(m) == 1 {
			return VLLM, v, true
		}
	}
	return Unknown, "", false
}
