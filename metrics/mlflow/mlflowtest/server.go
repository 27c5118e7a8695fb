// Package mlflowtest is a fake MLflow tracking server for tests: the REST
// calls surge makes (experiments, runs, log-batch, the artifact proxy),
// answered as MLflow 2.x answers them, every call and body kept.
package mlflowtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Server is the fake tracking server.
type Server struct {
	// URL is its base URL.
	URL string
	// ArtifactURI, when set, is the artifact root runs/create answers
	// (default: mlflow-artifacts:/EXP/RUN/artifacts, the proxy's).
	ArtifactURI string

	mu          sync.Mutex
	experiments map[string]string // name → id
	Calls       []Call
	Runs        map[string]*Run
}

// Call is one request received.
type Call struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Run is what the server holds of a run.
type Run struct {
	ID, ExperimentID, Name, Status string
	StartTime, EndTime             int64
	Tags, Params                   map[string]string
	Metrics                        map[string]float64
	Artifacts                      map[string][]byte
}

// New starts a fake server that t closes; experiments lists the names
// that exist already.
func New(t testing.TB, experiments ...string) *Server {
	s := Handler(experiments...)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Handler is a fake server not yet listening (URL empty): a handler for
// a server of the caller's own.
func Handler(experiments ...string) *Server {
	s := &Server{experiments: map[string]string{}, Runs: map[string]*Run{}}
	for i, n := range experiments {
		s.experiments[n] = fmt.Sprint(i + 1)
	}
	return s
}

// Snapshot returns the calls and runs so far, safe to read.
func (s *Server) Snapshot() ([]Call, map[string]Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := map[string]Run{}
	for k, v := range s.Runs {
		runs[k] = *v
	}
	return append([]Call(nil), s.Calls...), runs
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Calls = append(s.Calls, Call{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	if rest, ok := strings.CutPrefix(r.URL.Path, "/api/2.0/mlflow-artifacts/artifacts/"); ok && r.Method == http.MethodPut {
		parts := strings.SplitN(rest, "/", 4) // EXP/RUN/artifacts/FILE
		run := s.Runs[parts[min(1, len(parts)-1)]]
		if len(parts) < 4 || run == nil || parts[2] != "artifacts" {
			fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "no such artifact root")
			return
		}
		run.Artifacts[parts[3]] = body
		writeJSON(w, map[string]any{})
		return
	}
	var in map[string]any
	if len(body) > 0 && json.Unmarshal(body, &in) != nil {
		fail(w, http.StatusBadRequest, "MALFORMED_REQUEST", "not JSON")
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/2.0/mlflow/experiments/get-by-name":
		id, ok := s.experiments[r.URL.Query().Get("experiment_name")]
		if !ok {
			fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "Could not find experiment")
			return
		}
		writeJSON(w, map[string]any{"experiment": map[string]any{"experiment_id": id, "name": r.URL.Query().Get("experiment_name")}})
	case "POST /api/2.0/mlflow/experiments/create":
		name, _ := in["name"].(string)
		if name == "" {
			fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "name")
			return
		}
		id := fmt.Sprint(len(s.experiments) + 1)
		s.experiments[name] = id
		writeJSON(w, map[string]any{"experiment_id": id})
	case "POST /api/2.0/mlflow/runs/create":
		exp, _ := in["experiment_id"].(string)
		id := fmt.Sprintf("run%d", len(s.Runs)+1)
		run := &Run{ID: id, ExperimentID: exp, Status: "RUNNING", Tags: map[string]string{}, Params: map[string]string{},
			Metrics: map[string]float64{}, Artifacts: map[string][]byte{}}
		run.Name, _ = in["run_name"].(string)
		if v, ok := in["start_time"].(float64); ok {
			run.StartTime = int64(v)
		}
		for _, t := range list(in["tags"]) {
			run.Tags[t["key"].(string)] = t["value"].(string)
		}
		s.Runs[id] = run
		uri := s.ArtifactURI
		if uri == "" {
			uri = "mlflow-artifacts:/" + exp + "/" + id + "/artifacts"
		}
		writeJSON(w, map[string]any{"run": map[string]any{"info": map[string]any{"run_id": id, "experiment_id": exp, "artifact_uri": uri, "status": "RUNNING"}}})
	case "POST /api/2.0/mlflow/runs/log-batch":
		run := s.Runs[fmt.Sprint(in["run_id"])]
		if run == nil {
			fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "run")
			return
		}
		params, metrics := list(in["params"]), list(in["metrics"])
		if len(params) > 100 || len(params)+len(metrics) > 1000 {
			fail(w, http.StatusBadRequest, "INVALID_PARAMETER_VALUE", "batch over MLflow's limits")
			return
		}
		for _, p := range params {
			run.Params[p["key"].(string)] = p["value"].(string)
		}
		for _, m := range metrics {
			run.Metrics[m["key"].(string)] = m["value"].(float64)
		}
		writeJSON(w, map[string]any{})
	case "POST /api/2.0/mlflow/runs/update":
		run := s.Runs[fmt.Sprint(in["run_id"])]
		if run == nil {
			fail(w, http.StatusNotFound, "RESOURCE_DOES_NOT_EXIST", "run")
			return
		}
		run.Status, _ = in["status"].(string)
		if v, ok := in["end_time"].(float64); ok {
			run.EndTime = int64(v)
		}
		writeJSON(w, map[string]any{"run_info": map[string]any{"run_id": run.ID, "status": run.Status}})
	default:
		fail(w, http.StatusNotFound, "ENDPOINT_NOT_FOUND", r.Method+" "+r.URL.Path)
	}
}

func list(v any) []map[string]any {
	var out []map[string]any
	items, _ := v.([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_code": code, "message": msg})
}
