package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/internal/hostile"
	"github.com/surgebench/surge/loadgen/auth"
)

// The hosted endpoints' rows of surfaces (docs/clouds.md): requests signed
// with SigV4 or carrying an Azure key, a Google token endpoint and its
// credentials file. The secret is what each cloud's credential carries:
// the access key id and the session token of a signature (so an
// Authorization or X-Amz-Security-Token header that reached another
// origin is caught), the api-key, an authorized user's client secret.
func init() {
	surfaces = append(surfaces,
		hostile.Surface{
			Name: "benchmark requests, SigV4 (Bedrock), following redirects", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/model/"}},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--endpoint-type", "bedrock_converse", "--streaming", "--auth-type", "sigv4", "--aws-region", "us-east-1",
					"--skip-preflight", "--max-response-mib", "1", "--follow-redirects")
			},
			Environ: awsEnv, Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		},
		hostile.Surface{
			Name: "preflight, SigV4 (Bedrock)", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/model/"}, First: 1},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--endpoint-type", "bedrock_converse", "--streaming", "--auth-type", "sigv4", "--aws-region", "us-east-1")
			},
			Environ: awsEnv, Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{0, 2},
		},
		hostile.Surface{
			Name: "benchmark requests, Azure OpenAI api-key", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/openai/deployments/"}},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "azure", "--api-key", e.Secret, "--skip-preflight", "--max-response-mib", "1",
					"--endpoint", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21")
			},
			Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		},
		hostile.Surface{
			Name: "benchmark requests, SageMaker streamed", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/endpoints/"}},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--sagemaker-endpoint-name", "my-endpoint", "--streaming", "--aws-region", "us-east-1",
					"--skip-preflight", "--max-response-mib", "1", "--follow-redirects")
			},
			Environ: awsEnv, Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		},
		hostile.Surface{
			Name: "benchmark requests, Gemini (Vertex AI)", Reads: hostile.Server, Serve: googleTokens,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/v1beta/models/"}},
			Prepare: func(t *testing.T, e *hostile.Env) { writeUserCredentials(t, e, e.URL+"/token") },
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "google", "--endpoint-type", "gemini", "--streaming",
					"--skip-preflight", "--max-response-mib", "1", "--follow-redirects")
			},
			Environ: googleEnv, Limit: 1 << 20, Bound: 20 * time.Second, Exit: []int{1},
		},
		hostile.Surface{
			// Azure App Service's managed identity endpoint, its header
			// the secret; DefaultAzureCredential's other sources are off.
			Name: "Azure Entra ID token endpoint", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/msi/token"}},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "azure", "--skip-preflight", "--auth-timeout-seconds", authTimeout,
					"--endpoint", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21")
			},
			Environ: func(e *hostile.Env) []string {
				return []string{"IDENTITY_ENDPOINT=" + e.URL + "/msi/token", "IDENTITY_HEADER=" + e.Secret, "AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential"}
			},
			Limit: auth.MaxAnswer, Bound: 30 * time.Second, Exit: []int{0, 2},
		},
		hostile.Surface{
			// A Google Cloud machine's metadata server (GCE_METADATA_HOST),
			// no credentials file.
			Name: "Google metadata server", Reads: hostile.Server, Serve: mock,
			Hostile: hostile.Match{Method: http.MethodGet, Paths: []string{"/computeMetadata/v1/"}},
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "google", "--endpoint-type", "gemini", "--streaming", "--skip-preflight", "--auth-timeout-seconds", authTimeout)
			},
			Environ: func(e *hostile.Env) []string {
				return []string{"GCE_METADATA_HOST=" + strings.TrimPrefix(strings.TrimPrefix(e.URL, "http://"), "https://"),
					"GOOGLE_APPLICATION_CREDENTIALS=", "CLOUDSDK_CONFIG=" + e.Dir}
			},
			Limit: auth.MaxAnswer, Bound: 30 * time.Second, Exit: []int{0, 2},
		},
		hostile.Surface{
			Name: "Google token endpoint", Reads: hostile.Server, Serve: googleTokens,
			Hostile: hostile.Match{Method: http.MethodPost, Paths: []string{"/token"}},
			Prepare: func(t *testing.T, e *hostile.Env) { writeUserCredentials(t, e, e.URL+"/token") },
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "google", "--endpoint-type", "gemini", "--streaming", "--skip-preflight", "--auth-timeout-seconds", authTimeout)
			},
			Environ: googleEnv, Limit: auth.MaxAnswer, Bound: 30 * time.Second, Exit: []int{0, 2},
		},
		hostile.Surface{
			Name: "Google credentials file", Reads: hostile.File, File: "credentials.json",
			Args: func(e *hostile.Env) []string {
				return cloudArgs(e, "--auth-type", "google", "--endpoint-type", "gemini", "--url", "http://127.0.0.1:9")
			},
			Environ: func(e *hostile.Env) []string { return []string{"GOOGLE_APPLICATION_CREDENTIALS=" + e.Path} },
			Limit:   1 << 20, Bound: 20 * time.Second, Exit: []int{2},
		},
	)
}

// authTimeout bounds each credential fetch of the rows that serve one
// (--auth-timeout-seconds): a slow drip fails at it rather than at the 30 s
// default, and an answer on time comes well within it on a loaded machine.
const authTimeout = "8"

// cloudArgs is profileArgs without its API key (a cloud's credentials are
// its own), the case's server as --url unless more names one.
func cloudArgs(e *hostile.Env, more ...string) []string {
	url := e.URL
	for _, a := range more {
		if a == "--url" {
			url = ""
		}
	}
	args := profileArgs(e, url, more...)
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--api-key" && args[i+1] == e.Secret {
			return append(args[:i:i], args[i+2:]...)
		}
	}
	return args
}

// awsEnv gives the AWS SDK's chain the case's credentials, and nothing of
// the machine's.
func awsEnv(e *hostile.Env) []string {
	return []string{"AWS_ACCESS_KEY_ID=AKID" + e.Secret, "AWS_SECRET_ACCESS_KEY=" + e.Secret, "AWS_SESSION_TOKEN=" + e.Secret,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CA_BUNDLE=", "AWS_PROFILE=", "AWS_REGION=", "AWS_DEFAULT_REGION="}
}

// googleEnv points application default credentials at the case's file.
func googleEnv(e *hostile.Env) []string {
	return []string{"GOOGLE_APPLICATION_CREDENTIALS=" + filepath.Join(e.Dir, "adc.json")}
}

// writeUserCredentials writes an authorized user's credentials whose
// token endpoint is tokenURI and whose client secret is the case's.
func writeUserCredentials(t *testing.T, e *hostile.Env, tokenURI string) {
	t.Helper()
	f := fmt.Sprintf(`{"type":"authorized_user","client_id":"cid","client_secret":%q,"refresh_token":"rtoken","token_uri":%q}`, e.Secret, tokenURI)
	if err := os.WriteFile(filepath.Join(e.Dir, "adc.json"), []byte(f), 0o600); err != nil {
		t.Fatal(err)
	}
}

// googleTokens is a well-behaved token endpoint before the mock.
func googleTokens(*testing.T) http.Handler {
	m := mockserver.New(mockserver.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"ya29.hostile","token_type":"Bearer","expires_in":3600}`)
			return
		}
		m.ServeHTTP(w, r)
	})
}
