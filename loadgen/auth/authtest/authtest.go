// Package authtest checks the clouds' credentials the way their services
// do, written from the specifications rather than with the libraries that
// make them: AWS Signature Version 4 (the canonical request, the string to
// sign, the derived key), and a Google token endpoint that checks a
// service account's signed JWT grant. Tests of surge's signing stand
// fakes of the clouds on them.
package authtest

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AWSKeys are credentials a fake AWS service accepts.
type AWSKeys struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// Example keys, AWS's own documentation's.
var Example = AWSKeys{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
	SessionToken: "FwoGZXIvYXdzEXAMPLESESSIONTOKEN"}

// Setenv puts k in the environment the AWS SDK's default chain reads
// first, and keeps the chain from reading anything else of the machine's
// (its files, its instance role).
func (k AWSKeys) Setenv(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for name, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": k.AccessKeyID, "AWS_SECRET_ACCESS_KEY": k.SecretAccessKey, "AWS_SESSION_TOKEN": k.SessionToken,
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_CA_BUNDLE": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	} {
		t.Setenv(name, v)
	}
}

// Signature is what a SigV4 Authorization header says.
type Signature struct {
	AccessKeyID, Date, Region, Service string
	SignedHeaders                      []string
	Signature                          string
}

// ParseAuthorization reads an AWS4-HMAC-SHA256 Authorization header.
func ParseAuthorization(h string) (Signature, error) {
	rest, ok := strings.CutPrefix(h, "AWS4-HMAC-SHA256 ")
	if !ok {
		return Signature{}, errors.New("no AWS4-HMAC-SHA256 Authorization header")
	}
	var s Signature
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			c := strings.Split(v, "/")
			if len(c) != 5 || c[4] != "aws4_request" {
				return Signature{}, fmt.Errorf("credential %q: want KEY/DATE/REGION/SERVICE/aws4_request", v)
			}
			s.AccessKeyID, s.Date, s.Region, s.Service = c[0], c[1], c[2], c[3]
		case "SignedHeaders":
			s.SignedHeaders = strings.Split(v, ";")
		case "Signature":
			s.Signature = v
		}
	}
	if s.AccessKeyID == "" || len(s.SignedHeaders) == 0 || s.Signature == "" {
		return Signature{}, fmt.Errorf("incomplete Authorization header %q", h)
	}
	return s, nil
}

// VerifySigV4 checks r's signature (its body already read into body) as
// AWS does for every service but S3: the canonical request of r as it
// arrived, the string to sign over it, the key derived from k's secret.
// It returns the signature's scope.
func VerifySigV4(r *http.Request, body []byte, k AWSKeys) (Signature, error) {
	s, err := ParseAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		return s, err
	}
	switch {
	case s.AccessKeyID != k.AccessKeyID:
		return s, fmt.Errorf("unknown access key %q", s.AccessKeyID)
	case k.SessionToken != "" && r.Header.Get("X-Amz-Security-Token") != k.SessionToken:
		return s, errors.New("the session token is missing or wrong")
	case !slices.Contains(s.SignedHeaders, "host") || !slices.Contains(s.SignedHeaders, "x-amz-date"):
		return s, fmt.Errorf("signed headers %v lack host or x-amz-date", s.SignedHeaders)
	case k.SessionToken != "" && !slices.Contains(s.SignedHeaders, "x-amz-security-token"):
		return s, errors.New("the session token is not signed")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	at, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || at.Format("20060102") != s.Date {
		return s, fmt.Errorf("X-Amz-Date %q does not match the scope's date %s", amzDate, s.Date)
	}
	if d := time.Since(at); d > 5*time.Minute || d < -5*time.Minute {
		return s, fmt.Errorf("signed at %s: more than 5 minutes off", at)
	}
	var headers strings.Builder
	for _, name := range s.SignedHeaders {
		var values []string
		if name == "host" {
			values = []string{r.Host}
		} else {
			values = r.Header.Values(name)
		}
		if len(values) == 0 {
			return s, fmt.Errorf("signed header %q did not arrive", name)
		}
		for i, v := range values {
			values[i] = strings.Join(strings.Fields(v), " ")
		}
		headers.WriteString(name + ":" + strings.Join(values, ",") + "\n")
	}
	payload := sha256.Sum256(body)
	canonical := strings.Join([]string{r.Method, canonicalURI(r.URL.EscapedPath()), canonicalQuery(r.URL.RawQuery),
		headers.String(), strings.Join(s.SignedHeaders, ";"), hex.EncodeToString(payload[:])}, "\n")
	scope := s.Date + "/" + s.Region + "/" + s.Service + "/aws4_request"
	creq := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(creq[:])
	key := mac([]byte("AWS4"+k.SecretAccessKey), s.Date)
	for _, part := range []string{s.Region, s.Service, "aws4_request"} {
		key = mac(key, part)
	}
	if want := hex.EncodeToString(mac(key, toSign)); !hmac.Equal([]byte(want), []byte(s.Signature)) {
		return s, errors.New("the request signature we calculated does not match the signature you provided")
	}
	return s, nil
}

func mac(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// uriEncode percent-encodes every byte but the unreserved ones (and '/'
// where slash is false), as SigV4's UriEncode does.
func uriEncode(s string, slash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !slash {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// canonicalURI is the path as it arrived, encoded once more (every service
// but S3 encodes twice).
func canonicalURI(escaped string) string {
	if escaped == "" {
		return "/"
	}
	return uriEncode(escaped, false)
}

// canonicalQuery sorts the query's parameters and encodes them.
func canonicalQuery(raw string) string {
	v, _ := url.ParseQuery(raw)
	var pairs []string
	for k, vs := range v {
		for _, x := range vs {
			pairs = append(pairs, uriEncode(k, true)+"="+uriEncode(x, true))
		}
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// SigV4Handler answers as an AWS service in front of next: a request
// whose signature does not verify gets AWS's 403 (its message, its error
// type in x-amzn-ErrorType) and next never sees it. Scopes records every
// verified request's signature.
type SigV4Handler struct {
	Keys AWSKeys
	Next http.Handler
	mu   sync.Mutex
	seen []Signature
}

func (h *SigV4Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s, err := VerifySigV4(r, body, h.Keys)
	if err != nil {
		typ := "InvalidSignatureException"
		if s.AccessKeyID != "" && s.AccessKeyID != h.Keys.AccessKeyID {
			typ = "UnrecognizedClientException"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-Errortype", typ)
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"message": err.Error()})
		return
	}
	h.mu.Lock()
	h.seen = append(h.seen, s)
	h.mu.Unlock()
	r.Body = readCloser{strings.NewReader(string(body))}
	h.Next.ServeHTTP(w, r)
}

// Seen is the signatures of the requests that verified.
func (h *SigV4Handler) Seen() []Signature {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

func readAll(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, 64<<20))
}

// GoogleAccount is a service account whose key the test made, and the
// token endpoint that checks its grants (a JWT signed with the key, RS256)
// and issues tokens.
type GoogleAccount struct {
	Email string
	key   *rsa.PrivateKey
	mu    sync.Mutex
	live  map[string]bool
	n     int
}

// NewGoogleAccount makes a service account with a fresh key.
func NewGoogleAccount(t *testing.T, email string) *GoogleAccount {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &GoogleAccount{Email: email, key: k, live: map[string]bool{}}
}

// KeyFile writes the account's key file (GOOGLE_APPLICATION_CREDENTIALS),
// its token_uri the given endpoint.
func (a *GoogleAccount) KeyFile(t *testing.T, tokenURI string) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(a.key)
	if err != nil {
		t.Fatal(err)
	}
	f := map[string]string{"type": "service_account", "project_id": "test-project", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": a.Email,
		"client_id": "1", "token_uri": tokenURI}
	b, _ := json.Marshal(f)
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ServeToken is the token endpoint: a POST of the JWT bearer grant whose
// assertion the account's key signed, for the account, this endpoint and
// a scope, answers a token.
func (a *GoogleAccount) ServeToken(w http.ResponseWriter, r *http.Request) {
	fail := func(msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": msg})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		fail("want a form POST")
		return
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail("grant_type " + g)
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		fail("the assertion is no JWT")
		return
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || rsa.VerifyPKCS1v15(&a.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		fail("Invalid JWT Signature.")
		return
	}
	var claims struct {
		Iss, Scope, Aud string
		Exp, Iat        int64
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(b, &claims) != nil || claims.Iss != a.Email || claims.Scope == "" || time.Unix(claims.Exp, 0).Before(time.Now()) {
		fail("the grant's claims: " + string(b))
		return
	}
	a.mu.Lock()
	a.n++
	tok := fmt.Sprintf("ya29.test-token-%d", a.n)
	a.live[tok] = true
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3599})
}

// Issued reports whether the endpoint issued tok.
func (a *GoogleAccount) Issued(tok string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live[tok]
}
