package remote

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"

	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
)

// s3Source is an S3 object, read with the AWS SDK for Go v2: its
// credential chain, its signer, its retries; the outbound policy's client
// under it.
type s3Source struct {
	c           *s3.Client
	bucket, key string
}

// credentialsWithin bounds the look for credentials: the chain's last
// link asks the instance metadata service, which a machine outside a cloud
// never answers.
const credentialsWithin = 10 * time.Second

func newS3Source(ctx context.Context, rest string, o Options) (source, error) {
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" || key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("s3://%s: want s3://BUCKET/KEY naming one object", rest)
	}
	cfg, err := config.LoadDefaultConfig(ctx, config.WithLogger(logging.Nop{}))
	if err != nil {
		return nil, fmt.Errorf("s3://%s/%s: the AWS configuration: %s", bucket, key, sanitize.Line(err.Error()))
	}
	hc, err := s3Client(ctx, o)
	if err != nil {
		return nil, err
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Credentials != nil {
		cctx, cancel := context.WithTimeout(ctx, credentialsWithin)
		_, err := cfg.Credentials.Retrieve(cctx)
		cancel()
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			// No credentials anywhere in the chain: a public bucket
			// answers unsigned requests.
			cfg.Credentials = aws.AnonymousCredentials{}
		}
	} else {
		cfg.Credentials = aws.AnonymousCredentials{}
	}
	c := s3.NewFromConfig(cfg, func(so *s3.Options) {
		so.HTTPClient = hc
		if o.S3Endpoint != "" {
			so.BaseEndpoint = aws.String(o.S3Endpoint)
			so.UsePathStyle = true
		}
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		so.DisableLogOutputChecksumValidationSkipped = true
	})
	return &s3Source{c: c, bucket: bucket, key: key}, nil
}

// maxCABundle bounds the AWS_CA_BUNDLE file.
const maxCABundle = 16 << 20

// s3Client is the outbound policy's client for S3, trusting only the
// certificates of $AWS_CA_BUNDLE when it is set (as the SDK's own client
// would).
func s3Client(ctx context.Context, o Options) (*http.Client, error) {
	bundle := o.Getenv("AWS_CA_BUNDLE")
	if bundle == "" {
		return client, nil
	}
	pem, err := bounded.ReadFile(ctx, bundle, maxCABundle)
	if err != nil {
		return nil, fmt.Errorf("AWS_CA_BUNDLE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("AWS_CA_BUNDLE %s: no PEM certificate in it", sanitize.Line(bundle))
	}
	t := outbound.NewTransport(outbound.TransportOptions{ResponseHeaderTimeout: HeaderTimeout,
		TLS: &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}})
	return outbound.NewClient(outbound.WithTransport(t)), nil
}

func (s *s3Source) name() string { return baseName(s.key) }

func (s *s3Source) display() string { return "s3://" + s.bucket + "/" + s.key }

func (s *s3Source) open(ctx context.Context, offset int64, cur validator, cached bool) (*answer, error) {
	if cached {
		h, err := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &s.key})
		if err != nil {
			return nil, s.fail(err)
		}
		if cur.ETag != "" && aws.ToString(h.ETag) == cur.ETag {
			return &answer{NotModified: true, V: cur}, nil
		}
		offset = 0
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &s.key}
	if offset > 0 && cur.ETag != "" {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", offset))
		in.IfMatch = aws.String(cur.ETag)
	} else {
		offset = 0
	}
	out, err := s.c.GetObject(ctx, in)
	var re *awshttp.ResponseError
	if offset > 0 && errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable) {
		// The object changed since the copy began: start over.
		return s.open(ctx, 0, validator{Size: -1}, false)
	}
	if err != nil {
		return nil, s.fail(err)
	}
	a := &answer{Body: out.Body, V: validator{ETag: aws.ToString(out.ETag), Size: -1}}
	if out.LastModified != nil {
		a.V.LastModified = out.LastModified.UTC().Format(http.TimeFormat)
	}
	switch {
	case offset > 0:
		start, total, ok := contentRange(aws.ToString(out.ContentRange))
		if !ok || start != offset {
			out.Body.Close()
			return nil, fmt.Errorf("fetching %s: S3 answered a range other than the one asked for", s.display())
		}
		a.Partial, a.V.Size = true, total
	case out.ContentLength != nil:
		a.V.Size = *out.ContentLength
	}
	return a, nil
}

// fail says why S3 refused, by its HTTP status where it gave one.
func (s *s3Source) fail(err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() > 0 {
		return &StatusError{What: s.display(), Status: re.HTTPStatusCode()}
	}
	return fmt.Errorf("fetching %s: %s", s.display(), sanitize.Line(err.Error()))
}
