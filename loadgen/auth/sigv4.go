package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/surgebench/surge/internal/bounded"
)

// SigV4Options say what requests are signed for.
type SigV4Options struct {
	// Region is the signature's region ("": the AWS SDK's: AWS_REGION,
	// AWS_DEFAULT_REGION, the profile's region).
	Region string
	// Service is the signing name: bedrock, sagemaker, execute-api, ….
	Service string
	// Profile is the shared config profile ("": AWS_PROFILE, else
	// default).
	Profile string
	// Credentials, when set with a Region, are the credentials instead of
	// the SDK's default chain (nothing of the machine's is read).
	Credentials aws.CredentialsProvider
	// Timeout bounds one fetch of the credentials (0:
	// DefaultFetchTimeout).
	Timeout time.Duration
}

// SigV4 signs requests with AWS Signature Version 4, credentials from the
// AWS SDK's default chain.
type SigV4 struct {
	signer          *v4.Signer
	region, service string
	profile         string
	creds           cached[aws.Credentials]
	provider        aws.CredentialsProvider
	invalidate      func()
	identity        string
}

// ErrNoRegion is a SigV4 signer given no region, and none configured.
var ErrNoRegion = errors.New("no AWS region: give one, or set AWS_REGION, or a region in the profile")

// maxConfigFile bounds the AWS shared config and credentials files.
const maxConfigFile = 1 << 20

// NewSigV4 loads the AWS SDK's default configuration (the region and the
// credential chain) and fetches the credentials once, so that a run
// without any fails before it starts. They are refreshed ahead of their
// expiry until ctx ends or Close.
func NewSigV4(ctx context.Context, o SigV4Options) (*SigV4, error) {
	if o.Service == "" {
		return nil, errors.New("no AWS signing service")
	}
	if o.Credentials != nil && o.Region != "" {
		return newSigV4(ctx, o, aws.Config{Region: o.Region, Credentials: o.Credentials}, nil)
	}
	if err := checkSharedFiles(ctx); err != nil {
		return nil, err
	}
	var opts []func(*config.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	// The credential fetches (SSO, STS, the instance and container
	// endpoints) go through the outbound policy, unless a custom CA bundle
	// is configured (AWS_CA_BUNDLE, a profile's ca_bundle): only the SDK's
	// own client takes it (it follows only 307 and 308 redirects, and
	// drops the session token at another host).
	seen := &lastError{}
	cfg, err := config.LoadDefaultConfig(ctx, append(opts, config.WithHTTPClient(httpClient(fetchTimeout(o.Timeout), seen)))...)
	if err != nil && strings.Contains(err.Error(), "custom RootCAs") {
		cfg, err = config.LoadDefaultConfig(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return newSigV4(ctx, o, cfg, seen)
}

// newSigV4 is a signer with cfg's region and credentials (seen: what
// their client met, or nil).
func newSigV4(ctx context.Context, o SigV4Options, cfg aws.Config, seen *lastError) (*SigV4, error) {
	if cfg.Region == "" {
		return nil, ErrNoRegion
	}
	if cfg.Credentials == nil {
		return nil, errors.New("no AWS credentials found (environment, shared config and credentials files, SSO, web identity, container or instance role)")
	}
	s := &SigV4{signer: v4.NewSigner(), region: cfg.Region, service: o.Service, profile: o.Profile, provider: cfg.Credentials}
	if c, ok := cfg.Credentials.(*aws.CredentialsCache); ok {
		s.invalidate = c.Invalidate
	}
	s.creds.fetch, s.creds.timeout, s.creds.seen = s.fetch, o.Timeout, seen
	if err := s.creds.start(ctx); err != nil {
		return nil, fmt.Errorf("no AWS credentials: %w", err)
	}
	c, _ := s.creds.get(ctx)
	s.identity = fmt.Sprintf("AWS SigV4 (%s, %s): access key %s from %s", s.service, s.region, mask(c.AccessKeyID), c.Source)
	if c.AccountID != "" {
		s.identity += ", account " + c.AccountID
	}
	if o.Profile != "" {
		s.identity += ", profile " + o.Profile
	}
	return s, nil
}

// fetch asks the chain for credentials anew (its cache dropped first, so
// a refresh ahead of expiry gets new ones).
func (s *SigV4) fetch(ctx context.Context) (aws.Credentials, time.Time, error) {
	if s.invalidate != nil && s.creds.cur.Load() != nil {
		s.invalidate()
	}
	c, err := s.provider.Retrieve(ctx)
	if err != nil {
		return aws.Credentials{}, time.Time{}, err
	}
	if !c.HasKeys() {
		return aws.Credentials{}, time.Time{}, errors.New("the AWS credentials have no access key id or secret")
	}
	var exp time.Time
	if c.CanExpire {
		exp = c.Expires
	}
	return c, exp, nil
}

// Authorize signs req: the body's SHA-256, the headers set so far, the
// path and query.
func (s *SigV4) Authorize(req *http.Request, body []byte) error {
	c, err := s.creds.get(req.Context())
	if err != nil {
		return fmt.Errorf("AWS credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	return s.signer.SignHTTP(req.Context(), c, req, hex.EncodeToString(sum[:]), s.service, s.region, time.Now())
}

// Region is the region the requests are signed for (resolved when none
// was given).
func (s *SigV4) Region() string { return s.region }

// Identity names the signer and the credentials' access key (masked) and
// source.
func (s *SigV4) Identity() string { return s.identity }

// Secrets are the secret access key and the session token.
func (s *SigV4) Secrets() []string {
	e := s.creds.cur.Load()
	if e == nil {
		return nil
	}
	return []string{e.v.SecretAccessKey, e.v.SessionToken}
}

// Close stops refreshing the credentials.
func (s *SigV4) Close() { s.creds.close() }

// checkSharedFiles refuses AWS shared config and credentials files that
// are no regular files or larger than maxConfigFile, before the SDK reads
// them whole (a link to /dev/zero would never end).
func checkSharedFiles(ctx context.Context) error {
	home, _ := os.UserHomeDir()
	files := []struct{ env, dflt string }{
		{"AWS_CONFIG_FILE", filepath.Join(home, ".aws", "config")},
		{"AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, ".aws", "credentials")},
	}
	for _, f := range files {
		path := os.Getenv(f.env)
		if path == "" {
			path = f.dflt
		}
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if _, err := bounded.ReadFile(ctx, path, maxConfigFile); err != nil {
			return fmt.Errorf("the AWS shared file %s: %w", path, err)
		}
	}
	return nil
}
