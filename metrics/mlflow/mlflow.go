// Package mlflow logs a finished run to an MLflow tracking server through
// its REST API (MLflow 2.x): the experiment found or created by name, a
// run with the parameters and tags given, the summary's metrics, the
// artifact folder's files through the server's artifact proxy
// (mlflow-artifacts), and the run ended with its status.
//
// Every request goes through the one outbound client: a credential
// (MLFLOW_TRACKING_TOKEN, or MLFLOW_TRACKING_USERNAME and _PASSWORD)
// stays with the tracking server's origin, every answer is read within
// MaxAnswer, and each call has a timeout.
package mlflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
)

// Bounds.
const (
	// MaxAnswer bounds what is read of one answer of the tracking server.
	MaxAnswer = 1 << 20
	// CallTimeout bounds one API call; an artifact's upload has one more
	// second for each MiB it holds.
	CallTimeout = 10 * time.Second
	// MaxParamValue is the longest parameter value MLflow keeps (6000
	// characters): longer ones are cut, saying so.
	MaxParamValue = 6000
)

// MLflow's batch limits (log-batch).
const (
	maxBatchParams  = 100
	maxBatchMetrics = 1000
)

// Run statuses MLflow takes at the end of a run.
const (
	Finished = "FINISHED"
	Failed   = "FAILED"
	Killed   = "KILLED"
)

// Run is what is logged.
type Run struct {
	// Experiment is the experiment's name (created when missing); Name the
	// run's; ParentID, when set, makes it a child of that run.
	Experiment, Name, ParentID string
	// Tags, Params and Metrics are logged as given (keys sorted).
	Tags, Params map[string]string
	Metrics      map[string]float64
	// Dir is the artifact folder; Globs pick its files (slash-separated,
	// relative to Dir, path.Match patterns; a pattern without a slash also
	// matches in every subfolder); none: every file.
	Dir   string
	Globs []string
	// Start and End bound the run; Status is Finished, Failed or Killed.
	Start, End time.Time
	Status     string
}

// Credentials are the tracking server's (MLflow's environment variables).
type Credentials struct {
	Token, Username, Password string
}

// FromEnv reads MLFLOW_TRACKING_TOKEN, MLFLOW_TRACKING_USERNAME and
// MLFLOW_TRACKING_PASSWORD.
func FromEnv() Credentials {
	return Credentials{Token: os.Getenv("MLFLOW_TRACKING_TOKEN"), Username: os.Getenv("MLFLOW_TRACKING_USERNAME"),
		Password: os.Getenv("MLFLOW_TRACKING_PASSWORD")}
}

// Secrets are the credentials' values, for redaction.
func (c Credentials) Secrets() []string {
	var s []string
	for _, v := range []string{c.Token, c.Password} {
		if v != "" {
			s = append(s, v)
		}
	}
	return s
}

// Result is what Log did.
type Result struct {
	// ExperimentID and RunID name the run on the server; Artifacts counts
	// the files uploaded.
	ExperimentID, RunID string
	Artifacts           int
}

// Option configures Log.
type Option func(*client)

// WithCredentials authenticates with c.
func WithCredentials(c Credentials) Option { return func(cl *client) { cl.creds = c } }

// TrackingURL checks a --mlflow-tracking-uri: an http or https server
// (MLflow's file and database stores are the Python client's, not a
// server's).
func TrackingURL(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, errors.New("is empty: want the tracking server's URL (http://host:5000)")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q: want the tracking server's URL (http://host:5000)", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return nil, fmt.Errorf("%q: surge logs to an MLflow tracking server over http or https (not a %s store)", raw, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q: want the tracking server's URL (http://host:5000)", raw)
	}
	if u.User != nil {
		return nil, errors.New("carries a user or password: give them in MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD (or MLFLOW_TRACKING_TOKEN)")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: a tracking URI has no query or fragment", raw)
	}
	u.Path, u.ForceQuery = strings.TrimRight(u.Path, "/"), false
	return u, nil
}

// Log logs r to the tracking server at base (TrackingURL). A run created
// before a later step fails is ended FAILED, as far as the server lets it.
func Log(ctx context.Context, base *url.URL, r Run, opts ...Option) (Result, error) {
	c := &client{base: base}
	for _, o := range opts {
		o(c)
	}
	c.http = outbound.NewClient()
	var res Result
	var err error
	if res.ExperimentID, err = c.experiment(ctx, r.Experiment); err != nil {
		return res, err
	}
	var artifactURI string
	if res.RunID, artifactURI, err = c.createRun(ctx, res.ExperimentID, r); err != nil {
		return res, err
	}
	status := r.Status
	if err = c.logBatches(ctx, res.RunID, r); err == nil {
		res.Artifacts, err = c.upload(ctx, artifactURI, r)
	}
	if err != nil {
		status = Failed
	}
	if uerr := c.endRun(ctx, res.RunID, status, r.End); err == nil {
		err = uerr
	}
	return res, err
}

type client struct {
	base  *url.URL
	http  *http.Client
	creds Credentials
}

// APIError is an answer other than 2xx: its status and MLflow's
// error_code and message (sanitised, cut).
type APIError struct {
	Call, Code, Message string
	Status              int
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Call, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// call sends one API request with a JSON body (nil: none) and decodes its
// JSON answer into out (nil: ignored).
func (c *client) call(ctx context.Context, method, api string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	u := *c.base
	u.Path += "/api/2.0/mlflow/" + api
	u.RawQuery = query.Encode()
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.do(req, api, out)
}

// do sends req with the credentials and reads its answer within
// MaxAnswer.
func (c *client) do(req *http.Request, what string, out any) error {
	req.Header.Set("Accept", "application/json")
	switch {
	case c.creds.Token != "":
		req.Header.Set("Authorization", "Bearer "+c.creds.Token)
	case c.creds.Username != "":
		req.SetBasicAuth(c.creds.Username, c.creds.Password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, unwrapURL(err))
	}
	b, err := outbound.ReadBody(req.Context(), resp, MaxAnswer, "the tracking server's answer")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Call: what, Status: resp.StatusCode}
		var m struct {
			Code    string `json:"error_code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &m) == nil {
			e.Code, e.Message = cut(m.Code, 80), cut(m.Message, 300)
		} else if ct := resp.Header.Get("Content-Type"); ct != "" {
			e.Message = "an answer of " + cut(ct, 80)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "json") {
			return fmt.Errorf("%s: the tracking server answered %s, not JSON (is %s an MLflow tracking server?)", what, cut(ct, 80), c.base.Redacted())
		}
		return fmt.Errorf("%s: the answer is not MLflow's JSON: %w", what, err)
	}
	return nil
}

// unwrapURL drops *url.Error's repetition of the URL (the caller names
// the call).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// cut makes an outside string safe to print on one line, and short.
func cut(s string, n int) string {
	s = sanitize.Line(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// experiment finds the experiment by name, or creates it.
func (c *client) experiment(ctx context.Context, name string) (string, error) {
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	err := c.call(ctx, http.MethodGet, "experiments/get-by-name", url.Values{"experiment_name": {name}}, nil, &got)
	var ae *APIError
	switch {
	case err == nil && got.Experiment.ID != "":
		return got.Experiment.ID, nil
	case err == nil:
		return "", errors.New("experiments/get-by-name: the answer names no experiment_id")
	case !errors.As(err, &ae) || ae.Code != "RESOURCE_DOES_NOT_EXIST":
		return "", err
	}
	var made struct {
		ID string `json:"experiment_id"`
	}
	if err := c.call(ctx, http.MethodPost, "experiments/create", nil, map[string]string{"name": name}, &made); err != nil {
		return "", err
	}
	if made.ID == "" {
		return "", errors.New("experiments/create: the answer names no experiment_id")
	}
	return made.ID, nil
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type metricPoint struct {
	Key       string  `json:"key"`
	Value     float64 `json:"value"`
	Timestamp int64   `json:"timestamp"`
	Step      int64   `json:"step"`
}

// createRun starts the run, its tags set, and returns its id and artifact
// root.
func (c *client) createRun(ctx context.Context, experiment string, r Run) (id, artifactURI string, err error) {
	tags := sortedPairs(r.Tags)
	if r.ParentID != "" {
		tags = append(tags, keyValue{"mlflow.parentRunId", r.ParentID})
	}
	tags = append(tags, keyValue{"mlflow.source.name", "surge"}, keyValue{"mlflow.source.type", "LOCAL"})
	body := map[string]any{"experiment_id": experiment, "start_time": r.Start.UnixMilli(), "tags": tags}
	if r.Name != "" {
		body["run_name"] = r.Name
	}
	var got struct {
		Run struct {
			Info struct {
				ID          string `json:"run_id"`
				ArtifactURI string `json:"artifact_uri"`
			} `json:"info"`
		} `json:"run"`
	}
	if err := c.call(ctx, http.MethodPost, "runs/create", nil, body, &got); err != nil {
		return "", "", err
	}
	if got.Run.Info.ID == "" {
		return "", "", errors.New("runs/create: the answer names no run_id")
	}
	return got.Run.Info.ID, got.Run.Info.ArtifactURI, nil
}

// logBatches logs the parameters and metrics within log-batch's limits.
func (c *client) logBatches(ctx context.Context, run string, r Run) error {
	params := sortedPairs(r.Params)
	for i := range params {
		if len(params[i].Value) > MaxParamValue {
			params[i].Value = params[i].Value[:MaxParamValue-len("…")] + "…"
		}
	}
	ts := r.End.UnixMilli()
	keys := make([]string, 0, len(r.Metrics))
	for k := range r.Metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	points := make([]metricPoint, len(keys))
	for i, k := range keys {
		points[i] = metricPoint{Key: k, Value: r.Metrics[k], Timestamp: ts}
	}
	for len(params) > 0 || len(points) > 0 {
		np := min(len(params), maxBatchParams)
		nm := min(len(points), maxBatchMetrics-np)
		body := map[string]any{"run_id": run, "params": params[:np], "metrics": points[:nm]}
		if err := c.call(ctx, http.MethodPost, "runs/log-batch", nil, body, nil); err != nil {
			return err
		}
		params, points = params[np:], points[nm:]
	}
	return nil
}

// endRun sets the run's status and end.
func (c *client) endRun(ctx context.Context, run, status string, end time.Time) error {
	// Ended even when the caller gave up (a run left RUNNING is a
	// dashboard's lie), but briefly then: a Ctrl-C answers at once.
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
	}
	return c.call(ctx, http.MethodPost, "runs/update", nil, map[string]any{"run_id": run, "status": status, "end_time": end.UnixMilli()}, nil)
}

// ArtifactError says why the folder could not be uploaded where the
// server keeps the run's artifacts.
type ArtifactError struct{ URI string }

func (e *ArtifactError) Error() string {
	return fmt.Sprintf("the tracking server keeps this run's artifacts at %s, which surge cannot write: "+
		"serve them through it (mlflow server --serve-artifacts, the default since MLflow 2.0)", e.URI)
}

// upload puts the folder's files picked by r.Globs under the run's
// artifact root, through the server's mlflow-artifacts proxy.
func (c *client) upload(ctx context.Context, artifactURI string, r Run) (int, error) {
	if r.Dir == "" {
		return 0, nil
	}
	files, err := Files(r.Dir, r.Globs)
	if err != nil || len(files) == 0 {
		return 0, err
	}
	au, err := url.Parse(artifactURI)
	if err != nil || au.Scheme != "mlflow-artifacts" {
		return 0, &ArtifactError{URI: cut(artifactURI, 200)}
	}
	root := strings.Trim(au.Path, "/")
	for i, rel := range files {
		if err := c.put(ctx, root+"/"+rel, filepath.Join(r.Dir, filepath.FromSlash(rel))); err != nil {
			return i, err
		}
	}
	return len(files), nil
}

// put uploads one file, streamed from disk.
func (c *client) put(ctx context.Context, dest, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	u := *c.base
	u.Path += "/api/2.0/mlflow-artifacts/artifacts/" + dest
	ctx, cancel := context.WithTimeout(ctx, CallTimeout+time.Duration(fi.Size()>>20)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.String(), f)
	if err != nil {
		return err
	}
	req.ContentLength = fi.Size()
	req.GetBody = func() (io.ReadCloser, error) { return os.Open(file) } // a redirect that keeps the method sends it again
	req.Header.Set("Content-Type", "application/octet-stream")
	return c.do(req, "artifact "+sanitize.Line(path.Base(dest)), nil)
}

// Files lists the regular files under dir that globs pick (every one
// without globs), slash-separated and relative to dir, sorted. Links are
// not followed (a link to /dev/zero uploads nothing).
func Files(dir string, globs []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if picked(rel, globs) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the artifact folder: %w", err)
	}
	return out, nil
}

// picked reports whether a glob picks rel: a pattern with a slash is
// matched against the whole path, one without against the base name too.
func picked(rel string, globs []string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
		if !strings.Contains(g, "/") {
			if ok, _ := path.Match(g, path.Base(rel)); ok {
				return true
			}
		}
	}
	return false
}

// ValidGlob checks a --mlflow-artifact-glob pattern.
func ValidGlob(g string) error {
	if strings.TrimSpace(g) == "" {
		return errors.New("is empty")
	}
	if _, err := path.Match(g, ""); err != nil {
		return fmt.Errorf("%q: %w", g, err)
	}
	return nil
}

func sortedPairs(m map[string]string) []keyValue {
	out := make([]keyValue, 0, len(m))
	for k, v := range m {
		out = append(out, keyValue{k, v})
	}
	slices.SortFunc(out, func(a, b keyValue) int { return strings.Compare(a.Key, b.Key) })
	return out
}
