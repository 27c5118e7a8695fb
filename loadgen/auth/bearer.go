package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"cloud.google.com/go/compute/metadata"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/surgebench/surge/internal/bounded"
)

// Bearer sends a token from a cloud's credential chain as Authorization:
// Bearer, fetched again ahead of its expiry.
type Bearer struct {
	tok      cached[[]string] // the header's value, built once a token
	identity string
}

// Authorize sets the Authorization header to the current token.
func (b *Bearer) Authorize(req *http.Request, _ []byte) error {
	v, err := b.tok.get(req.Context())
	if err != nil {
		return err
	}
	req.Header["Authorization"] = v
	return nil
}

// Identity names the cloud and the principal.
func (b *Bearer) Identity() string { return b.identity }

// Secrets is the token in use.
func (b *Bearer) Secrets() []string {
	if e := b.tok.cur.Load(); e != nil && len(e.v) > 0 {
		return []string{strings.TrimPrefix(e.v[0], "Bearer ")}
	}
	return nil
}

// Close stops refreshing the token.
func (b *Bearer) Close() { b.tok.close() }

func bearer(token string) []string { return []string{"Bearer " + token} }

// AzureScope is the scope Entra ID tokens are asked for: Azure OpenAI's
// (and the Azure AI services').
const AzureScope = "https://cognitiveservices.azure.com/.default"

// NewAzure gets Microsoft Entra ID tokens from the Azure SDK's
// DefaultAzureCredential (environment: a service principal's secret or
// certificate, workload identity, managed identity, the Azure CLI, the
// Azure Developer CLI), one first so that a run without any fails before
// it starts. Each fetch takes at most timeout (0: DefaultFetchTimeout).
func NewAzure(ctx context.Context, timeout time.Duration) (*Bearer, error) {
	timeout = fetchTimeout(timeout)
	b := &Bearer{}
	b.tok.timeout, b.tok.seen = timeout, &lastError{}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{
		ClientOptions: azcore.ClientOptions{Transport: httpClient(timeout, b.tok.seen)},
	})
	if err != nil {
		return nil, fmt.Errorf("the Entra ID credential chain: %w", err)
	}
	b.tok.fetch = func(ctx context.Context) ([]string, time.Time, error) {
		t, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{AzureScope}})
		if err != nil {
			return nil, time.Time{}, err
		}
		if t.Token == "" {
			return nil, time.Time{}, errNoToken
		}
		return bearer(t.Token), t.ExpiresOn, nil
	}
	if err := b.tok.start(ctx); err != nil {
		return nil, fmt.Errorf("no Microsoft Entra ID token (DefaultAzureCredential): %w", err)
	}
	b.identity = "Azure OpenAI: Microsoft Entra ID token (DefaultAzureCredential)" + claims(b.Secrets()[0])
	return b, nil
}

// claims names the principal a JWT says it was issued to (its upn,
// unique_name, app id or object id, and tenant), never the token: "" when
// it is no JWT.
func claims(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c map[string]any
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	get := func(k string) string { s, _ := c[k].(string); return s }
	who := get("upn")
	switch {
	case who == "" && get("unique_name") != "":
		who = get("unique_name")
	case who == "" && get("appid") != "":
		who = "app " + get("appid")
	case who == "" && get("oid") != "":
		who = "object " + get("oid")
	}
	if who == "" {
		return ""
	}
	if tid := get("tid"); tid != "" {
		who += " in tenant " + tid
	}
	return ", for " + who
}

// GoogleScope is the scope Google tokens are asked for (Vertex AI's).
const GoogleScope = "https://www.googleapis.com/auth/cloud-platform"

// maxCredentialsFile bounds a Google credentials file.
const maxCredentialsFile = 1 << 20

// NewGoogle gets tokens from Google's application default credentials:
// the file GOOGLE_APPLICATION_CREDENTIALS names (a service account's key,
// an authorized user's refresh token, a workload identity federation
// config), gcloud's application_default_credentials.json, or the metadata
// server of a Google Cloud machine. The files are read within a bound;
// their token endpoints are asked through the outbound policy. Each fetch
// takes at most timeout (0: DefaultFetchTimeout).
func NewGoogle(ctx context.Context, timeout time.Duration) (*Bearer, error) {
	timeout = fetchTimeout(timeout)
	b := &Bearer{}
	b.tok.timeout, b.tok.seen = timeout, &lastError{}
	// The credentials keep this context for every later fetch: its
	// client, not the run's cancellation (each fetch is waited for under
	// the caller's).
	octx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, httpClient(timeout, b.tok.seen))
	params := google.CredentialsParams{Scopes: []string{GoogleScope}, EarlyTokenRefresh: earlyRefresh}
	creds, from, err := googleCredentials(ctx, octx, params, timeout, b.tok.seen)
	if err != nil {
		return nil, err
	}
	b.tok.fetch = func(context.Context) ([]string, time.Time, error) {
		t, err := creds.TokenSource.Token()
		if err != nil {
			return nil, time.Time{}, err
		}
		if t.AccessToken == "" {
			return nil, time.Time{}, errNoToken
		}
		return bearer(t.AccessToken), t.Expiry, nil
	}
	if err := b.tok.start(ctx); err != nil {
		return nil, fmt.Errorf("no Google access token (application default credentials from %s): %w", from, err)
	}
	b.identity = "Google Cloud: application default credentials, " + googleIdentity(creds, from)
	return b, nil
}

// googleCredentials finds the application default credentials as
// google.FindDefaultCredentials does, reading the files within a bound:
// what it asks now ends with ctx (or timeout), the credentials keep octx.
func googleCredentials(ctx, octx context.Context, params google.CredentialsParams, timeout time.Duration, seen *lastError) (*google.Credentials, string, error) {
	path, from := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"), "GOOGLE_APPLICATION_CREDENTIALS"
	if path == "" {
		path, from = gcloudFile(), "gcloud's application_default_credentials.json"
		if _, err := os.Stat(path); err != nil {
			// The metadata server, on Google Cloud.
			return metadataCredentials(ctx, octx, timeout, seen)
		}
	}
	b, err := bounded.ReadFile(ctx, path, maxCredentialsFile)
	if err != nil {
		return nil, "", fmt.Errorf("the credentials file of %s: %w", from, err)
	}
	// The file is the user's own (the variable, gcloud's): any type of
	// application default credentials it says it holds is taken.
	var f struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Type == "" {
		return nil, "", fmt.Errorf("the credentials file of %s, %s: no JSON object with a \"type\"", from, path)
	}
	c, err := google.CredentialsFromJSONWithTypeAndParams(octx, b, google.CredentialsType(f.Type), params)
	if err != nil {
		return nil, "", fmt.Errorf("the credentials file of %s, %s: %w", from, path, err)
	}
	return c, from, nil
}

// gcloudFile is where gcloud keeps the application default credentials.
func gcloudFile() string {
	if dir := os.Getenv("CLOUDSDK_CONFIG"); dir != "" {
		return filepath.Join(dir, "application_default_credentials.json")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".config", "gcloud", "application_default_credentials.json")
}

// googleIdentity names the credentials: their type and account, and the
// project.
func googleIdentity(c *google.Credentials, from string) string {
	var f struct {
		Type        string `json:"type"`
		ClientEmail string `json:"client_email"`
		ClientID    string `json:"client_id"`
		Account     string `json:"account"`
	}
	who := from
	if len(c.JSON) > 0 && json.Unmarshal(c.JSON, &f) == nil {
		switch {
		case f.ClientEmail != "":
			who = fmt.Sprintf("%s %s (%s)", f.Type, f.ClientEmail, from)
		case f.Account != "":
			who = fmt.Sprintf("%s %s (%s)", f.Type, f.Account, from)
		case f.Type != "":
			who = fmt.Sprintf("%s (%s)", f.Type, from)
		}
	}
	if c.ProjectID != "" {
		who += ", project " + c.ProjectID
	}
	return who
}

// metadataCredentials are those of a Google Cloud machine's service
// account, from its metadata server (GCE_METADATA_HOST, else
// 169.254.169.254), asked as google.FindDefaultCredentials would but
// through the outbound policy's client: the library's own asks with a
// client of its own. The probe and the account's name end with ctx (each
// within timeout); the token source keeps octx.
func metadataCredentials(ctx, octx context.Context, timeout time.Duration, seen *lastError) (*google.Credentials, string, error) {
	mc := metadata.NewWithOptions(&metadata.Options{Client: httpClient(timeout, seen)})
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !mc.OnGCEWithContext(pctx) {
		return nil, "", errors.New("no Google application default credentials: set GOOGLE_APPLICATION_CREDENTIALS to a credentials file, run `gcloud auth application-default login`, or run on Google Cloud (its metadata server)")
	}
	// The account and project only name the identity: asked briefly.
	nctx, ncancel := context.WithTimeout(ctx, min(namesTimeout, timeout))
	defer ncancel()
	from := "the metadata server"
	if email, err := mc.EmailWithContext(nctx, "default"); err == nil && email != "" {
		from += ", service account " + email
	}
	project, _ := mc.ProjectIDWithContext(nctx)
	return &google.Credentials{ProjectID: project, TokenSource: metadataTokens{ctx: octx, c: mc, timeout: timeout}}, from, nil
}

// namesTimeout bounds the metadata server's answers that only name the
// identity (its service account, its project).
const namesTimeout = 5 * time.Second

// metadataTokens asks the metadata server for the default service
// account's access token, scoped for Vertex AI.
type metadataTokens struct {
	ctx     context.Context // keeps the client; fetches are waited for under the caller's
	c       *metadata.Client
	timeout time.Duration // bounds one fetch
}

// Token fetches a token (the answer is bounded by the client).
func (m metadataTokens) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(m.ctx, m.timeout)
	defer cancel()
	s, err := m.c.GetWithContext(ctx, "instance/service-accounts/default/token?"+url.Values{"scopes": {GoogleScope}}.Encode())
	if err != nil {
		return nil, fmt.Errorf("the metadata server's token: %w", err)
	}
	var r struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return nil, fmt.Errorf("the metadata server's token: no JSON (%d bytes)", len(s))
	}
	if r.AccessToken == "" || r.ExpiresIn <= 0 {
		return nil, errors.New("the metadata server's token: no access token, or no expires_in")
	}
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, Expiry: time.Now().Add(time.Duration(r.ExpiresIn) * time.Second)}, nil
}

// errNoToken is a token endpoint's answer without a token.
var errNoToken = errors.New("the answer carried no access token")
