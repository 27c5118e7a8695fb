package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/surgebench/surge/loadgen/auth/authtest"
)

// signedRequest is a request as the generator sends it: headers set,
// then Authorize.
func signedRequest(t *testing.T, a Authorizer, url string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-ID", "0123456789abcdef")
	req.Header.Set("Accept", "text/event-stream")
	if err := a.Authorize(req, body); err != nil {
		t.Fatal(err)
	}
	return req
}

// TestSigV4SignsAsTheSpecificationSays: a server that checks the
// signature as AWS does (authtest, written from the specification, not
// with the SDK) accepts every request surge signs, whatever its path and
// query; one made with another secret gets AWS's 403.
func TestSigV4SignsAsTheSpecificationSays(t *testing.T) {
	authtest.Example.Setenv(t)
	var got atomic.Int64
	h := &authtest.SigV4Handler{Keys: authtest.Example, Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		fmt.Fprint(w, "{}")
	})}
	srv := httptest.NewServer(h)
	defer srv.Close()
	s, err := NewSigV4(context.Background(), SigV4Options{Region: "us-east-1", Service: "execute-api"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{
		"/prod/v1/chat/completions",
		"/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
		"/openai/deployments/gpt/chat/completions?api-version=2024-10-21&b=a%20b&a=1",
		"/v1beta/models/gemini:streamGenerateContent?alt=sse",
		"/",
	} {
		body := []byte(`{"model":"m","messages":[{"role":"user","content":"Hi ünïcode"}],"stream":true}`)
		resp, err := srv.Client().Do(signedRequest(t, s, srv.URL+path, body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
	}
	if seen := h.Seen(); len(seen) != 5 || seen[0].Region != "us-east-1" || seen[0].Service != "execute-api" {
		t.Errorf("signatures %+v", seen)
	}
	if !strings.Contains(s.Identity(), "AKID…MPLE") || strings.Contains(s.Identity(), authtest.Example.SecretAccessKey) {
		t.Errorf("identity %q: want the key id masked, never the secret", s.Identity())
	}
	if secrets := strings.Join(s.Secrets(), " "); !strings.Contains(secrets, authtest.Example.SecretAccessKey) || !strings.Contains(secrets, authtest.Example.SessionToken) {
		t.Errorf("secrets to redact %q lack the secret key or the session token", secrets)
	}

	// Another secret: the server's 403.
	wrong := authtest.Example
	wrong.SecretAccessKey = "not-the-secret"
	wrong.Setenv(t)
	w, err := NewSigV4(context.Background(), SigV4Options{Region: "us-east-1", Service: "execute-api"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	resp, err := srv.Client().Do(signedRequest(t, w, srv.URL+"/prod/v1/chat/completions", []byte("{}")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "does not match") {
		t.Errorf("a wrong secret: %d %s, want 403", resp.StatusCode, b)
	}
	if got.Load() != 5 {
		t.Errorf("the service saw %d requests, want the 5 signed right", got.Load())
	}
}

func TestSigV4NeedsCredentialsAndARegion(t *testing.T) {
	authtest.AWSKeys{}.Setenv(t)
	t.Setenv("HOME", t.TempDir())
	if _, err := NewSigV4(context.Background(), SigV4Options{Region: "us-east-1", Service: "bedrock"}); err == nil {
		t.Error("no credentials anywhere, and the signer was made")
	}
	authtest.Example.Setenv(t)
	if _, err := NewSigV4(context.Background(), SigV4Options{Service: "bedrock"}); !errors.Is(err, ErrNoRegion) {
		t.Errorf("no region: %v", err)
	}
	t.Setenv("AWS_REGION", "eu-west-3")
	s, err := NewSigV4(context.Background(), SigV4Options{Service: "bedrock"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Region() != "eu-west-3" {
		t.Errorf("region %q, want AWS_REGION's", s.Region())
	}
	// A shared config file that is no regular file is refused before the
	// SDK reads it whole.
	if _, err := os.Stat("/dev/zero"); err == nil {
		t.Setenv("AWS_CONFIG_FILE", "/dev/zero")
		if _, err := NewSigV4(context.Background(), SigV4Options{Service: "bedrock"}); err == nil || !strings.Contains(err.Error(), "/dev/zero") {
			t.Errorf("AWS_CONFIG_FILE=/dev/zero: %v", err)
		}
	}
}

// TestGoogleServiceAccount: with GOOGLE_APPLICATION_CREDENTIALS naming a
// service account's key, the token endpoint (token_uri) gets a grant the
// key signed, and every request carries its token.
func TestGoogleServiceAccount(t *testing.T) {
	acct := authtest.NewGoogleAccount(t, "bench@test-project.iam.gserviceaccount.com")
	tokens := httptest.NewServer(http.HandlerFunc(acct.ServeToken))
	defer tokens.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", acct.KeyFile(t, tokens.URL+"/token"))
	b, err := NewGoogle(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	req := signedRequest(t, b, "http://127.0.0.1:9/v1/x", nil)
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || !acct.Issued(tok) {
		t.Errorf("Authorization %q: not a token the endpoint issued", req.Header.Get("Authorization"))
	}
	if id := b.Identity(); !strings.Contains(id, "bench@test-project.iam.gserviceaccount.com") || !strings.Contains(id, "test-project") {
		t.Errorf("identity %q", id)
	}
}

// TestGoogleAuthorizedUser: an authorized user's refresh token is traded
// at its token_uri.
func TestGoogleAuthorizedUser(t *testing.T) {
	var form string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		form = r.PostForm.Encode()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"ya29.user","token_type":"Bearer","expires_in":3600}`)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "adc.json")
	f := fmt.Sprintf(`{"type":"authorized_user","client_id":"cid","client_secret":"csecret","refresh_token":"rtoken","token_uri":%q}`, srv.URL+"/token")
	if err := os.WriteFile(path, []byte(f), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	b, err := NewGoogle(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if req := signedRequest(t, b, "http://127.0.0.1:9/", nil); req.Header.Get("Authorization") != "Bearer ya29.user" {
		t.Errorf("Authorization %q", req.Header.Get("Authorization"))
	}
	if !strings.Contains(form, "refresh_token=rtoken") || !strings.Contains(form, "grant_type=refresh_token") {
		t.Errorf("the token request %q", form)
	}
}

// TestFetchTimeout: a token endpoint that never answers fails the first
// fetch once the caller's timeout has passed, not DefaultFetchTimeout.
func TestFetchTimeout(t *testing.T) {
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the client's going away is seen
		<-r.Context().Done()
	}))
	defer stalled.Close()
	path := filepath.Join(t.TempDir(), "adc.json")
	f := fmt.Sprintf(`{"type":"authorized_user","client_id":"cid","client_secret":"csecret","refresh_token":"rtoken","token_uri":%q}`, stalled.URL+"/token")
	if err := os.WriteFile(path, []byte(f), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	start := time.Now()
	b, err := NewGoogle(context.Background(), 300*time.Millisecond)
	if err == nil {
		b.Close()
		t.Fatal("a token from an endpoint that never answers")
	}
	// Well under the default, with room for a loaded machine.
	if took := time.Since(start); took > DefaultFetchTimeout/2 {
		t.Errorf("failed after %v with a 300ms timeout", took)
	}
	if !strings.Contains(err.Error(), "deadline exceeded") && !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("the error does not say it timed out: %v", err)
	}
}

// TestGoogleMetadataServer: with no credentials file, a Google Cloud
// machine's metadata server gives the token (asked with its header, for
// Vertex AI's scope) and names the service account and project.
func TestGoogleMetadataServer(t *testing.T) {
	var scopes atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "no Metadata-Flavor", http.StatusForbidden)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		switch r.URL.Path {
		case "/computeMetadata/v1/instance/service-accounts/default/token":
			scopes.Store(r.URL.Query().Get("scopes"))
			fmt.Fprint(w, `{"access_token":"ya29.machine","expires_in":3599,"token_type":"Bearer"}`)
		case "/computeMetadata/v1/instance/service-accounts/default/email":
			fmt.Fprint(w, "vm@test-project.iam.gserviceaccount.com")
		case "/computeMetadata/v1/project/project-id":
			fmt.Fprint(w, "test-project")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(srv.URL, "http://"))
	b, err := NewGoogle(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if req := signedRequest(t, b, "http://127.0.0.1:9/", nil); req.Header.Get("Authorization") != "Bearer ya29.machine" {
		t.Errorf("Authorization %q", req.Header.Get("Authorization"))
	}
	if s, _ := scopes.Load().(string); s != GoogleScope {
		t.Errorf("asked for scopes %q, want %q", s, GoogleScope)
	}
	if id := b.Identity(); !strings.Contains(id, "vm@test-project.iam.gserviceaccount.com") || !strings.Contains(id, "project test-project") || strings.Contains(id, "ya29") {
		t.Errorf("identity %q", id)
	}
	// A metadata server that answers a page gives no token, and says so.
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>") })
	if _, err := NewGoogle(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "metadata server") {
		t.Errorf("a metadata server answering a page: %v", err)
	}
}

// TestTokenEndpointsThatMisbehave: a token endpoint that redirects (to
// another origin, with the grant) or answers a page fails the
// credentials, naming it, and the grant goes nowhere else.
func TestTokenEndpointsThatMisbehave(t *testing.T) {
	var away atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { away.Add(1) }))
	defer other.Close()
	for name, h := range map[string]http.HandlerFunc{
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/token", http.StatusTemporaryRedirect)
		},
		"HTML": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>Sign in</body></html>")
		},
	} {
		srv := httptest.NewServer(h)
		path := filepath.Join(t.TempDir(), "adc.json")
		f := fmt.Sprintf(`{"type":"authorized_user","client_id":"cid","client_secret":"csecret","refresh_token":"rtoken","token_uri":%q}`, srv.URL)
		if err := os.WriteFile(path, []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
		if b, err := NewGoogle(context.Background(), 0); err == nil {
			b.Close()
			t.Errorf("%s: credentials made", name)
		} else if !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") {
			t.Errorf("%s: %v does not say where the credentials came from", name, err)
		}
		srv.Close()
	}
	if away.Load() != 0 {
		t.Errorf("the redirect's origin got %d token requests", away.Load())
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/dev/zero")
	if _, err := NewGoogle(context.Background(), 0); err == nil {
		t.Error("GOOGLE_APPLICATION_CREDENTIALS=/dev/zero read")
	}
}

// jwt is an unsigned token with claims (the Azure fake's).
func jwt(claims map[string]any) string {
	b, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + ".sig"
}

// TestAzureManagedIdentity: DefaultAzureCredential's managed identity (App
// Service's endpoint) gives the token, asked for Azure OpenAI's scope.
func TestAzureManagedIdentity(t *testing.T) {
	tok := jwt(map[string]any{"appid": "app-1", "tid": "tenant-1"})
	var resource string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Identity-Header") != "secret-header" {
			http.Error(w, "no header", http.StatusBadRequest)
			return
		}
		resource = r.URL.Query().Get("resource")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"expires_on":"%d","resource":%q,"token_type":"Bearer"}`, tok, time.Now().Add(time.Hour).Unix(), resource)
	}))
	defer srv.Close()
	for _, k := range []string{"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_TOKEN_CREDENTIALS", "MSI_ENDPOINT", "IMDS_ENDPOINT"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	t.Setenv("IDENTITY_ENDPOINT", srv.URL+"/msi/token")
	t.Setenv("IDENTITY_HEADER", "secret-header")
	// A user-assigned identity of its own: the Azure SDK keeps managed
	// identity tokens in a cache of the process's, which would answer a
	// second run of this test (-count=2) without asking the server.
	t.Setenv("AZURE_CLIENT_ID", fmt.Sprintf("client-%d", time.Now().UnixNano()))
	b, err := NewAzure(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if req := signedRequest(t, b, "http://127.0.0.1:9/", nil); req.Header.Get("Authorization") != "Bearer "+tok {
		t.Errorf("Authorization %q", req.Header.Get("Authorization"))
	}
	if resource != strings.TrimSuffix(AzureScope, "/.default") {
		t.Errorf("asked for %q, want Azure OpenAI's resource", resource)
	}
	if id := b.Identity(); !strings.Contains(id, "app app-1 in tenant tenant-1") || strings.Contains(id, tok) {
		t.Errorf("identity %q", id)
	}
}

// TestTimeoutSaysWhatFailedBefore: a fetch that tries again after each
// failure, as the SDKs do, until its time runs out says what it was
// trying again after: an answer over MaxAnswer, an error status.
func TestTimeoutSaysWhatFailedBefore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		serve http.HandlerFunc
		want  string
	}{
		{"endless answer", func(w http.ResponseWriter, r *http.Request) {
			chunk := strings.Repeat("a", 64<<10)
			for range 2 * MaxAnswer / len(chunk) {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
		}, "512 KiB"},
		{"error status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}, "/token: 503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.serve)
			defer srv.Close()
			seen := &lastError{}
			client := httpClient(time.Second, seen)
			c := cached[string]{timeout: 300 * time.Millisecond, seen: seen, fetch: func(ctx context.Context) (string, time.Time, error) {
				for {
					req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/token", nil)
					if resp, err := client.Do(req); err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err == nil && resp.StatusCode == http.StatusOK {
							return "token", time.Time{}, nil
						}
					}
					select {
					case <-ctx.Done():
						return "", time.Time{}, ctx.Err()
					case <-time.After(20 * time.Millisecond):
					}
				}
			}}
			err := c.start(context.Background())
			if err == nil {
				c.close()
				t.Fatal("a credential from a server that never gives one")
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "trying again after") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v: want the deadline and %q", err, tc.want)
			}
		})
	}
	// A fetch that met no failure of its own is not blamed on an
	// earlier one's.
	seen := &lastError{}
	seen.set(errors.New("an earlier fetch's failure"))
	c := cached[string]{timeout: 50 * time.Millisecond, seen: seen, fetch: func(ctx context.Context) (string, time.Time, error) {
		<-ctx.Done()
		return "", time.Time{}, ctx.Err()
	}}
	if err := c.start(context.Background()); !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "earlier") {
		t.Errorf("a stalled fetch after an earlier failure: %v", err)
	}
}

// TestCachedRefreshesAheadOfExpiry: the goroutine fetches a credential
// before it expires, requests meanwhile read the current one without
// fetching, and one that finds it expired fetches it itself.
func TestCachedRefreshesAheadOfExpiry(t *testing.T) {
	t.Parallel()
	var fetches atomic.Int64
	c := cached[int]{fetch: func(context.Context) (int, time.Time, error) {
		n := int(fetches.Add(1))
		return n, time.Now().Add(2 * time.Second), nil
	}}
	if err := c.start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if v, err := c.get(context.Background()); err != nil || v != 1 {
			t.Fatalf("get = %d, %v before any refresh", v, err)
		}
	}
	if fetches.Load() != 1 {
		t.Fatalf("%d fetches for 100 requests", fetches.Load())
	}
	deadline := time.Now().Add(10 * time.Second)
	for fetches.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if v, _ := c.get(context.Background()); v < 2 {
		t.Errorf("after its refresh, get = %d", v)
	}
	c.close()
	// Closed, and its credential expired: a request fetches.
	c.cur.Store(&entry[int]{v: 9, expires: time.Now().Add(-time.Second)})
	if v, err := c.get(context.Background()); err != nil || v == 9 {
		t.Errorf("an expired credential: get = %d, %v", v, err)
	}
}

// expiring hands out credentials that expire after life, a new key id
// each time.
type expiring struct {
	n    atomic.Int64
	life time.Duration
}

func (e *expiring) Retrieve(context.Context) (aws.Credentials, error) {
	n := e.n.Add(1)
	return aws.Credentials{AccessKeyID: fmt.Sprintf("ASIAEXAMPLE%05d", n), SecretAccessKey: "secret", SessionToken: "token",
		CanExpire: true, Expires: time.Now().Add(e.life), Source: "test"}, nil
}

// TestSigV4RefreshesTemporaryCredentials: temporary credentials (SSO, an
// assumed role) are fetched again before they expire, and the requests
// signed after carry the new ones.
func TestSigV4RefreshesTemporaryCredentials(t *testing.T) {
	t.Parallel()
	src := &expiring{life: 2 * time.Second}
	s, err := NewSigV4(context.Background(), SigV4Options{Region: "us-east-1", Service: "bedrock", Credentials: src})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keyOf := func() string {
		sig, err := authtest.ParseAuthorization(signedRequest(t, s, "http://127.0.0.1:9/x", []byte("{}")).Header.Get("Authorization"))
		if err != nil {
			t.Fatal(err)
		}
		return sig.AccessKeyID
	}
	first := keyOf()
	deadline := time.Now().Add(10 * time.Second)
	for src.n.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := keyOf(); got == first {
		t.Errorf("still signing with %s after the refresh (%d fetches)", got, src.n.Load())
	}
}
