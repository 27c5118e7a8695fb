package profile

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/internal/sanitize"
)

// modelListServer serves chat completions and, at /v1/models, list (with
// status), recording the Authorization each /v1/models request carried.
type modelListServer struct {
	chat   apptest.Server
	status int
	list   string
	mu     sync.Mutex
	auth   []string
}

func (m *modelListServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/models" {
		m.chat.ServeHTTP(w, r)
		return
	}
	m.mu.Lock()
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(m.status)
	_, _ = w.Write([]byte(m.list))
}

// With no --model, the run asks /v1/models (with the run's API key) and
// uses the first model it lists in the folder name, the header and the
// exports, saying which it picked; when the server names none, the
// fallback stays and the log says why.
func TestModelFromServer(t *testing.T) {
	t.Parallel()
	big := `{"data": [{"id": "` + strings.Repeat("x", 2<<20) + `"}]}`
	for _, tc := range []struct {
		name         string
		status       int
		list         string
		model, log   string
		discoverable bool // ModelFromServer (no --model given)
	}{
		{"one", 200, `{"object": "list", "data": [{"id": "served-model", "object": "model"}]}`, "served-model", "model: served-model, the one the server lists (no --model given)", true},
		{"several", 200, `{"data": [{"id": "org/first"}, {"id": "second"}, {"id": "third"}]}`, "org/first", "model: org/first, the first of the 3 the server lists (org/first, second, third; give --model to pick another)", true},
		{"none served", 404, `{"error": "no such route"}`, "mock", "/v1/models named none (HTTP 404): sending model \"mock\"", true},
		{"empty list", 200, `{"data": []}`, "mock", "named none (it lists no model)", true},
		{"not a list", 200, `<html>`, "mock", "named none (not a model list", true},
		{"too large", 200, big, "mock", "named none (the answer is over the 1 MiB lim", true},
		{"--model given", 200, `{"data": [{"id": "served-model"}]}`, "mock", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &modelListServer{chat: apptest.Server{Tokens: 4}, status: tc.status, list: tc.list}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			c := apptest.RunConfig(ts.URL, t.TempDir())
			c.Model, c.ModelFromServer, c.APIKey, c.RequestCount, c.Tokenizer = "mock", tc.discoverable, "sk-test-key", 4, "builtin"
			var log bytes.Buffer
			p, err := prepareConfig(c, &log)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(strings.Fields(log.String()), " "), tc.log) {
				t.Errorf("log does not say %q:\n%s", tc.log, log.String())
			}
			if want := strings.ReplaceAll(tc.model, "/", "_") + "-openai-chat-concurrency4"; p.artifactName() != want {
				t.Errorf("folder %q, want %q", p.artifactName(), want)
			}
			srv.mu.Lock()
			asked := srv.auth
			srv.mu.Unlock()
			if tc.discoverable && (len(asked) != 1 || asked[0] != "Bearer sk-test-key") {
				t.Errorf("/v1/models asked with Authorization %q, want the run's key once", asked)
			}
			if !tc.discoverable && len(asked) != 0 {
				t.Errorf("/v1/models asked although --model was given")
			}
			if tc.name != "one" {
				return
			}
			// The whole run: header and exports name the server's model.
			var out bytes.Buffer
			if _, err := runConfig(context.Background(), c, &out, &log); err != nil {
				t.Fatal(err)
			}
			if want := "surge profile: served-model @"; !strings.Contains(out.String(), want) {
				t.Errorf("header does not say %q:\n%s", want, out.String())
			}
			m := apptest.ReadExport(t, c.ArtifactDir)
			names := m["input_config"].(map[string]any)["endpoint"].(map[string]any)["model_names"]
			if s, ok := names.([]any); !ok || len(s) != 1 || s[0] != "served-model" {
				t.Errorf("input_config.endpoint.model_names %v, want [served-model]", names)
			}
			lines := apptest.RecordLines(t, c.ArtifactDir)
			if len(lines) != 4 {
				t.Errorf("%d records, want 4", len(lines))
			}
		})
	}
}

func FuzzParseModelList(f *testing.F) {
	f.Add([]byte(`{"data": [{"id": "a"}, {"id": "b"}]}`))
	f.Add([]byte(`{"data": [{"id": "\u0000"}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, err := parseModelList(b)
		if err == nil && len(ids) == 0 {
			t.Fatal("no error and no model")
		}
		for _, id := range ids {
			if id == "" || len(id) > 512 || sanitize.Index(id) >= 0 {
				t.Fatalf("id %q kept", id)
			}
		}
	})
}
