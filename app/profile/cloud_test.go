package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/auth"
	"github.com/surgebench/surge/loadgen/auth/authtest"
	"github.com/surgebench/surge/metrics"
)

// cloudMock is the mock as a cloud's fake serves it: fast, its answers
// capped by the requests.
func cloudMock(cfg mockserver.Config) *mockserver.Server {
	cfg.TTFT, cfg.ITL = 2*time.Millisecond, time.Millisecond
	return mockserver.New(cfg)
}

// bearerGate answers Google's 401 unless a request carries a token ok
// accepts; it counts those it let through.
type bearerGate struct {
	ok   func(tok string) bool
	next http.Handler
	n    atomic.Int64
}

func (g *bearerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found || !g.ok(tok) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	g.n.Add(1)
	g.next.ServeHTTP(w, r)
}

// cloudRun runs c against url and checks every request succeeded.
func cloudRun(t *testing.T, c cmdline.Config) {
	t.Helper()
	res, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Summary.Run[metrics.RequestCount]; n != float64(c.RequestCount) || len(res.Summary.Errors) > 0 {
		t.Fatalf("%v of %d requests succeeded; errors %+v", n, c.RequestCount, res.Summary.Errors)
	}
}

// refused runs c expecting the preflight to stop it with the server's
// answer named.
func refused(t *testing.T, c cmdline.Config, want ...string) {
	t.Helper()
	c.SkipPreflight = false
	_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
	var ue *cmdline.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("%v: want a usage error (exit 2)", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
}

// TestAWSHostedEndpoints: behind a fake AWS service that checks SigV4 as
// the specification says (authtest), with keys from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN: an OpenAI-compatible
// server behind API Gateway, Bedrock's ConverseStream and
// InvokeModelWithResponseStream and SageMaker's streamed endpoint all
// run; another secret stops the run at the preflight with the 403 named.
func TestAWSHostedEndpoints(t *testing.T) {
	mock := cloudMock(mockserver.Config{})
	// API Gateway's stage is the path's first segment, the backend's the rest.
	stage := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := strings.CutPrefix(r.URL.Path, "/prod/"); ok {
			r.URL.Path, r.URL.RawPath = "/"+p, ""
		}
		mock.ServeHTTP(w, r)
	})
	gate := &authtest.SigV4Handler{Keys: authtest.Example, Next: stage}
	srv := httptest.NewServer(gate)
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		cfg     func(c *cmdline.Config)
		service string
	}{
		{"API Gateway, chat", func(c *cmdline.Config) {
			c.URL = srv.URL + "/prod"
			c.Cloud = cmdline.Cloud{AuthType: "sigv4", AWSService: "execute-api", AWSRegion: "us-east-1"}
		}, "execute-api"},
		{"Bedrock ConverseStream", func(c *cmdline.Config) {
			c.EndpointType, c.Model = "bedrock_converse", "anthropic.claude-3-haiku-20240307-v1:0"
			c.Cloud = cmdline.Cloud{AuthType: "sigv4", AWSRegion: "us-east-1"}
		}, "bedrock"},
		{"Bedrock Converse, whole", func(c *cmdline.Config) {
			c.EndpointType, c.Model, c.Streaming = "bedrock_converse", "amazon.nova-lite-v1:0", false
			c.Cloud = cmdline.Cloud{AuthType: "sigv4", AWSRegion: "us-east-1"}
		}, "bedrock"},
		{"Bedrock InvokeModelWithResponseStream", func(c *cmdline.Config) {
			c.EndpointType, c.Model = "bedrock_invoke", "anthropic.claude-3-haiku-20240307-v1:0"
			c.Cloud = cmdline.Cloud{AuthType: "sigv4", AWSRegion: "us-east-1"}
		}, "bedrock"},
		{"SageMaker, streamed", func(c *cmdline.Config) {
			c.Cloud = cmdline.Cloud{AWSRegion: "us-west-2", SageMaker: cmdline.SageMaker{EndpointName: "my-vllm-endpoint"}}
		}, "sagemaker"},
		{"SageMaker, completions", func(c *cmdline.Config) {
			c.EndpointType, c.Streaming = "completions", false
			c.Cloud = cmdline.Cloud{AWSRegion: "us-west-2", SageMaker: cmdline.SageMaker{EndpointName: "my-vllm-endpoint", TargetVariant: "AllTraffic"}}
		}, "sagemaker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			authtest.Example.Setenv(t)
			c := apptest.RunConfig(srv.URL, t.TempDir())
			tc.cfg(&c)
			before := len(gate.Seen())
			cloudRun(t, c)
			seen := gate.Seen()[before:]
			if len(seen) < c.RequestCount || seen[0].Service != tc.service {
				t.Errorf("%d verified requests, the first for %+v; want %d for %s", len(seen), seen, c.RequestCount, tc.service)
			}
			wrong := authtest.Example
			wrong.SecretAccessKey = "wrongwrongwrongwrong"
			wrong.Setenv(t)
			refused(t, c, "403", "does not match")
		})
	}
}

// TestAzureOpenAI: a deployment's URL (its api-version a query string),
// the key in api-key; or, without a key, a Microsoft Entra ID token from
// DefaultAzureCredential (managed identity). A wrong key is the 401
// named.
func TestAzureOpenAI(t *testing.T) {
	mock := cloudMock(mockserver.Config{APIKey: "azure-key-0123456789"})
	srv := httptest.NewServer(mock)
	defer srv.Close()
	c := apptest.RunConfig(srv.URL, t.TempDir())
	c.CustomEndpoint = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
	c.Cloud.AuthType, c.APIKey = "azure", "azure-key-0123456789"
	cloudRun(t, c)
	c.APIKey = "wrong-key-0123456789"
	refused(t, c, "401", "invalid subscription key")

	tokens := cloudMock(mockserver.Config{RequireToken: true})
	ts := httptest.NewServer(tokens)
	defer ts.Close()
	for _, k := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_TOKEN_CREDENTIALS", "MSI_ENDPOINT", "IMDS_ENDPOINT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("IDENTITY_ENDPOINT", ts.URL+"/msi/token")
	t.Setenv("IDENTITY_HEADER", "header")
	// A user-assigned identity of its own: the Azure SDK's process-wide
	// token cache would otherwise answer a second run (-count=2) with a
	// token of the first run's mock.
	t.Setenv("AZURE_CLIENT_ID", fmt.Sprintf("client-%d", time.Now().UnixNano()))
	c = apptest.RunConfig(ts.URL, t.TempDir())
	c.CustomEndpoint = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
	c.Cloud.AuthType = "azure"
	cloudRun(t, c)
	// The api-version kept as a query string: without it Azure's 404.
	c.CustomEndpoint = "/openai/deployments/gpt-4o/chat/completions"
	refused(t, c, "404")
}

// TestVertexAI: Google's application default credentials (a service
// account's key, its grant checked by the token endpoint) give the
// tokens of Gemini's streamGenerateContent, streamed as server-sent
// events and as a JSON array, and of Vertex's OpenAI-compatible
// endpoint. A token the service did not issue is the 401 named.
func TestVertexAI(t *testing.T) {
	acct := authtest.NewGoogleAccount(t, "bench@test-project.iam.gserviceaccount.com")
	gate := &bearerGate{ok: acct.Issued, next: cloudMock(mockserver.Config{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/token", acct.ServeToken)
	mux.Handle("/", gate)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", acct.KeyFile(t, srv.URL+"/token"))
	const models = "/v1/projects/test-project/locations/us-central1/publishers/google/models/{model}"
	for _, tc := range []struct {
		name, kind, path string
		streaming        bool
	}{
		{"streamGenerateContent, SSE", "gemini", models + ":streamGenerateContent?alt=sse", true},
		{"streamGenerateContent, JSON array", "gemini", models + ":streamGenerateContent", true},
		{"generateContent", "gemini", models + ":generateContent", false},
		{"OpenAI-compatible", "chat", "/v1/projects/test-project/locations/us-central1/endpoints/openapi/chat/completions", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := apptest.RunConfig(srv.URL, t.TempDir())
			c.EndpointType, c.Model, c.CustomEndpoint, c.Streaming = tc.kind, "gemini-2.0-flash", tc.path, tc.streaming
			c.Cloud.AuthType = "google"
			before := gate.n.Load()
			cloudRun(t, c)
			if n := gate.n.Load() - before; n < int64(c.RequestCount) {
				t.Errorf("%d requests with a token, want %d", n, c.RequestCount)
			}
			if tc.streaming {
				recs := apptest.RecordLines(t, c.ArtifactDir)
				m, _ := recs[0]["metrics"].(map[string]any)
				if _, ok := m["inter_token_latency"]; !ok {
					t.Errorf("a streamed record without ITL: %v", recs[0])
				}
			}
		})
	}
	// Tokens the service did not issue.
	gate.ok = func(string) bool { return false }
	c := apptest.RunConfig(srv.URL, t.TempDir())
	c.EndpointType, c.Model, c.CustomEndpoint = "gemini", "gemini-2.0-flash", models+":streamGenerateContent?alt=sse"
	c.Cloud.AuthType = "google"
	refused(t, c, "401", "invalid authentication credentials")
	// A token endpoint that never answers fails the run within
	// --auth-timeout-seconds, whose default is the auth package's.
	if d, _ := cmdline.ParseProfile(); d.Cloud.AuthTimeout != auth.DefaultFetchTimeout {
		t.Errorf("--auth-timeout-seconds defaults to %v, the fetches to %v", d.Cloud.AuthTimeout, auth.DefaultFetchTimeout)
	}
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer stalled.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", acct.KeyFile(t, stalled.URL+"/token"))
	c.Cloud.AuthTimeout = 300 * time.Millisecond
	start := time.Now()
	refused(t, c, "--auth-type google", "deadline exceeded")
	if took := time.Since(start); took > auth.DefaultFetchTimeout/2 {
		t.Errorf("refused after %v with --auth-timeout-seconds 0.3", took)
	}
}

// TestCloudIdentityAndSecrets: the console names the cloud and who the
// requests go as, and no export holds the secret key or the session
// token, even when the server echoes them.
func TestCloudIdentityAndSecrets(t *testing.T) {
	keys := authtest.Example
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		b, _ := json.Marshal(map[string]string{"message": "echo " + r.Header.Get("X-Amz-Security-Token") + " " + keys.SecretAccessKey})
		_, _ = w.Write(b)
	})
	srv := httptest.NewServer(&authtest.SigV4Handler{Keys: keys, Next: echo})
	defer srv.Close()
	keys.Setenv(t)
	dir := t.TempDir()
	c := apptest.RunConfig(srv.URL, dir)
	c.EndpointType, c.Cloud = "bedrock_converse", cmdline.Cloud{AuthType: "sigv4", AWSRegion: "us-east-1"}
	c.ExportLevel = "raw"
	var log strings.Builder
	if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "cloud: AWS SigV4 (bedrock, us-east-1): access key AKID…MPLE from EnvConfigCredentials") {
		t.Errorf("the console does not name the identity:\n%s", log.String())
	}
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		b, err := os.ReadFile(dir + "/" + f.Name())
		if err != nil {
			continue
		}
		for _, secret := range []string{keys.SecretAccessKey, keys.SessionToken} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds a secret", f.Name())
			}
		}
	}
	if strings.Contains(log.String(), keys.SecretAccessKey) {
		t.Error("the console printed the secret key")
	}
}
