package spec

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// The credentials --auth-type names.
const (
	AuthSigV4  = "sigv4"
	AuthAzure  = "azure"
	AuthGoogle = "google"
)

// Cloud is how the requests reach a model a cloud hosts (docs/clouds.md).
type Cloud struct {
	// Auth is the cloud whose credential chain authorizes every request
	// (AuthSigV4, AuthAzure, AuthGoogle; "": none, --api-key as the type
	// sends it). AuthAzure with an API key sends it as api-key instead.
	Auth string
	// AWS is the SigV4 signature's scope: Region ("": the AWS SDK's, from
	// AWS_REGION or the profile), Service (the signing name) and Profile.
	AWS AWS
	// SageMaker is the endpoint --sagemaker-endpoint-name invokes (its
	// Name "": none).
	SageMaker cmdline.SageMaker
	// Timeout bounds one fetch of the credentials.
	Timeout time.Duration
}

// AWS is a SigV4 signature's scope and the profile its credentials come
// from.
type AWS struct {
	Region, Service, Profile string
}

// Cloud reports whether requests carry a cloud's credentials.
func (c *Cloud) Cloud() bool { return c.Auth != "" }

// The cloud patterns are compiled on first use: at init they were
// ≈ 0.5 ms of the start of every surge process (sageMakerName's {0,62}
// most of it), and only cloud options and AWS hosts need them.
var (
	// sageMakerName is a SageMaker endpoint name (AWS's pattern).
	sageMakerName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`) })

	// awsRegion is a region that may go into a host name.
	awsRegion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]+)+-[0-9]+$`) })
)

// awsHostPattern reads a signing name and region from an AWS endpoint's
// host.
type awsHostPattern struct {
	re      *regexp.Regexp
	service string
}

// awsHosts are API Gateway's, Bedrock Runtime's, SageMaker Runtime's and
// Lambda's function URLs' hosts.
var awsHosts = sync.OnceValue(func() []awsHostPattern {
	return []awsHostPattern{
		{regexp.MustCompile(`\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`), "execute-api"},
		{regexp.MustCompile(`^bedrock-runtime(-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`), "bedrock"},
		{regexp.MustCompile(`^runtime(-fips)?\.sagemaker\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`), "sagemaker"},
		{regexp.MustCompile(`\.lambda-url\.([a-z0-9-]+)\.on\.aws$`), "lambda"},
	}
})

// awsHost is the signing name and region an AWS host names ("" when it
// is none of awsHosts).
func awsHost(host string) (service, region string) {
	host = strings.ToLower(host)
	for _, h := range awsHosts() {
		if m := h.re.FindStringSubmatch(host); m != nil {
			for _, g := range m[1:] {
				if awsRegion().MatchString(g) {
					region = g
				}
			}
			return h.service, region
		}
	}
	return "", ""
}

// envRegion is the region the AWS SDK takes from the environment.
func envRegion() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return os.Getenv("AWS_DEFAULT_REGION")
}

// awsDomain is the DNS suffix of a region's endpoints.
func awsDomain(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// parseCloud reads --auth-type, --aws-* and --sagemaker-*. It runs before
// the target is parsed: SageMaker's endpoint name, and a Bedrock type
// signed with no --url, give the URL (from the region) and the path.
func parseCloud(s *Spec, c *cmdline.Config) error {
	cl := c.Cloud
	auth := strings.ToLower(strings.TrimSpace(cl.AuthType))
	switch auth {
	case "", "none":
		auth = ""
	case AuthSigV4, AuthAzure, AuthGoogle:
	default:
		return cmdline.Usagef("--auth-type %q: want sigv4, azure, google or none", cl.AuthType)
	}
	kind, _ := endpoint.ParseKind(c.EndpointType) // parseEndpointKind names a bad one
	bedrock := kind == endpoint.BedrockConverse || kind == endpoint.BedrockInvoke
	sm := cl.SageMaker
	noURL := len(nonEmpty(c.URLs)) == 0 && (c.URL == "" || c.URL == "mock")
	if sm.EndpointName == "" {
		for _, f := range []struct{ flag, v string }{{"--sagemaker-target-model", sm.TargetModel},
			{"--sagemaker-inference-component-name", sm.InferenceComponent}, {"--sagemaker-target-variant", sm.TargetVariant}} {
			if f.v != "" {
				return cmdline.Usagef("%s is for --sagemaker-endpoint-name (the endpoint it picks within)", f.flag)
			}
		}
	} else {
		switch {
		case auth != "" && auth != AuthSigV4:
			return cmdline.Usagef("--sagemaker-endpoint-name signs with SigV4: --auth-type %s cannot go with it", auth)
		case !sageMakerName().MatchString(sm.EndpointName):
			return cmdline.Usagef("--sagemaker-endpoint-name %q: want SageMaker's endpoint name (letters, digits and hyphens, at most 63)", sm.EndpointName)
		case bedrock || kind == endpoint.Gemini:
			return cmdline.Usagef("--sagemaker-endpoint-name invokes a container serving an OpenAI-style API (--endpoint-type chat, completions, embeddings, …), not %s", kind)
		case strings.TrimSpace(c.CustomEndpoint) != "":
			return cmdline.Usagef("--endpoint and --sagemaker-endpoint-name: the endpoint's name sets the path (/endpoints/NAME/invocations)")
		}
		auth = AuthSigV4
		op := "/invocations"
		if c.Streaming && kind.Info().Streams {
			op = "/invocations-response-stream" // InvokeEndpointWithResponseStream
		}
		c.CustomEndpoint = "/endpoints/" + sm.EndpointName + op
	}
	aws := AWS{Region: strings.TrimSpace(cl.AWSRegion), Service: strings.TrimSpace(cl.AWSService), Profile: strings.TrimSpace(cl.AWSProfile)}
	if auth != AuthSigV4 {
		for _, f := range []struct{ flag, v string }{{"--aws-region", aws.Region}, {"--aws-service", aws.Service}, {"--aws-profile", aws.Profile}} {
			if f.v != "" {
				return cmdline.Usagef("%s is for --auth-type sigv4 (AWS Signature V4)", f.flag)
			}
		}
	}
	if auth == AuthSigV4 {
		switch {
		case aws.Service != "":
		case bedrock:
			aws.Service = "bedrock"
		case sm.EndpointName != "":
			aws.Service = "sagemaker"
		}
		region := aws.Region
		if region == "" {
			region = envRegion()
		}
		if noURL && (bedrock || sm.EndpointName != "") {
			// The endpoint follows from the region, as the AWS SDK's.
			if !awsRegion().MatchString(region) {
				what := "--sagemaker-endpoint-name"
				if sm.EndpointName == "" {
					what = "--endpoint-type " + string(kind) + " without --url"
				}
				if region == "" {
					return cmdline.Usagef("%s needs --aws-region (or AWS_REGION): the endpoint's region gives its URL", what)
				}
				return cmdline.Usagef("--aws-region %q: want an AWS region, such as us-east-1", region)
			}
			host := "bedrock-runtime." + region
			if sm.EndpointName != "" {
				host = "runtime.sagemaker." + region
			}
			c.URLs, c.URL = []string{"https://" + host + "." + awsDomain(region)}, ""
		}
		if first := firstURL(c); first != "" && first != "mock" {
			if u, err := loadgen.BaseURL(first); err == nil {
				service, region := awsHost(u.Hostname())
				if aws.Service == "" {
					aws.Service = service
				}
				if aws.Region == "" {
					aws.Region = region
				}
			}
		}
		if aws.Service == "" {
			return cmdline.Usagef("--auth-type sigv4 needs --aws-service: the signing name (execute-api for API Gateway, bedrock, sagemaker, …)")
		}
	}
	switch {
	case auth != "" && noURL && len(c.URLs) == 0:
		return cmdline.Usagef("--auth-type %s needs --url: the cloud's endpoint (the embedded mock takes no credentials)", auth)
	case auth != "" && c.WaitTimeout > 0:
		return cmdline.Usagef("--wait-for-model-timeout probes with unsigned requests: it cannot go with --auth-type %s", auth)
	case auth != "" && c.ModelFromServer:
		return cmdline.Usagef("--auth-type %s needs --model: the model (or deployment) the cloud serves", auth)
	case auth != "" && (c.ResetKVCache || c.ServerProfiler):
		return cmdline.Usagef("--reset-kv-cache and --server-profiler call the server with unsigned requests: they cannot go with --auth-type %s", auth)
	case auth == AuthSigV4 && strings.TrimSpace(c.APIKey) != "":
		return cmdline.Usagef("--api-key and --auth-type sigv4: the signature is the credential (a Bedrock API key goes in --api-key alone)")
	case auth == AuthGoogle && strings.TrimSpace(c.APIKey) != "":
		return cmdline.Usagef("--api-key and --auth-type google: the token is the credential (a Gemini API key goes in --api-key alone)")
	}
	if auth != "" {
		h, err := cmdline.ParseHeaders(c.Headers)
		if err != nil {
			return &cmdline.UsageError{Err: err}
		}
		if h.Get("Authorization") != "" && (auth != AuthAzure || strings.TrimSpace(c.APIKey) == "") {
			return cmdline.Usagef("-H Authorization and --auth-type %s: the auth type sets it", auth)
		}
	}
	s.Cloud = Cloud{Auth: auth, AWS: aws, SageMaker: sm, Timeout: cl.AuthTimeout}
	return nil
}

// firstURL is the first --url given.
func firstURL(c *cmdline.Config) string {
	if u := nonEmpty(c.URLs); len(u) > 0 {
		return u[0]
	}
	return c.URL
}

// apiKeyHeader is the header an API key goes in: api-key for Azure
// OpenAI (--auth-type azure), else the endpoint type's.
func apiKeyHeader(s *Spec, ep *endpoint.Endpoint, key string) (name, value string) {
	if s.Cloud.Auth == AuthAzure {
		return "api-key", key
	}
	return ep.KeyHeader(key)
}

// parseCloudHeaders adds SageMaker's routing headers.
func parseCloudHeaders(s *Spec, c *cmdline.Config) error {
	sm := s.Cloud.SageMaker
	if sm.EndpointName == "" {
		return nil
	}
	h := s.Request.Headers
	if h == nil {
		h = http.Header{}
		s.Request.Headers = h
	}
	if sm.TargetModel != "" {
		if s.Endpoint.Streams() {
			// AWS refuses TargetModel on InvokeEndpointWithResponseStream.
			s.Warnings = append(s.Warnings, "--sagemaker-target-model: not sent with --streaming (InvokeEndpointWithResponseStream takes no target model)")
		} else {
			h.Set("X-Amzn-SageMaker-Target-Model", sm.TargetModel)
		}
	}
	if sm.InferenceComponent != "" {
		h.Set("X-Amzn-SageMaker-Inference-Component", sm.InferenceComponent)
	}
	if sm.TargetVariant != "" {
		h.Set("X-Amzn-SageMaker-Target-Variant", sm.TargetVariant)
	}
	return nil
}
