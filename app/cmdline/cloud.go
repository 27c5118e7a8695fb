package cmdline

import (
	"time"

	"github.com/urfave/cli/v2"
)

// catCloud groups the hosted endpoints' flags in --help (--help cloud).
const catCloud = "Cloud (AWS SigV4, Bedrock, SageMaker, Azure, Vertex AI: docs/clouds.md)"

// Cloud is how requests reach a model a cloud hosts: its credentials and,
// for SageMaker, the endpoint. AIPerf's names where AIPerf has the flag.
type Cloud struct {
	// AuthType is --auth-type: sigv4 (AWS), azure (Microsoft Entra ID,
	// or --api-key as api-key), google (application default
	// credentials); "" or none: --api-key as the endpoint type sends it.
	AuthType string
	// AWSRegion, AWSService and AWSProfile are the SigV4 signature's
	// region, signing name (--aws-service, AIPerf's alias
	// --aws-signing-service) and the shared config profile.
	AWSRegion, AWSService, AWSProfile string
	// AuthTimeout is --auth-timeout-seconds: the bound on one fetch of
	// the cloud's credentials.
	AuthTimeout time.Duration
	// SageMaker is --sagemaker-*: the endpoint's name sets the URL, the
	// path and SigV4 signing.
	SageMaker SageMaker
}

// SageMaker is an Amazon SageMaker endpoint to invoke.
type SageMaker struct {
	EndpointName, TargetModel, InferenceComponent, TargetVariant string
}

// cloudOptions are the hosted endpoints' flags.
func cloudOptions() []option {
	return []option{
		{flag: &cli.StringFlag{Category: catCloud, Name: "auth-type", Usage: "the cloud's credential chain: sigv4 (AWS), azure (Entra ID, or --api-key as api-key) or google (application default credentials)"}, path: "endpoint.auth_type", field: func(c *Config) any { return &c.Cloud.AuthType }},
		{flag: &cli.Float64Flag{Category: catCloud, Name: "auth-timeout-seconds", Value: 30, Usage: "seconds one fetch of the cloud's credentials may take (a token endpoint, a metadata server, SSO)"}, path: "endpoint.auth_timeout_seconds", field: func(c *Config) any { return Secs(&c.Cloud.AuthTimeout) }},
		{flag: &cli.StringFlag{Category: catCloud, Name: "aws-region", DefaultText: "the URL's, AWS_REGION's or the profile's", Usage: "SigV4's region"}, path: "endpoint.aws_region", field: func(c *Config) any { return &c.Cloud.AWSRegion }},
		{flag: &cli.StringFlag{Category: catCloud, Name: "aws-service", Aliases: []string{"aws-signing-service"}, DefaultText: "the type's, or the URL's", Usage: "SigV4's signing name: execute-api (API Gateway), bedrock, sagemaker"}, path: "endpoint.aws_service", field: func(c *Config) any { return &c.Cloud.AWSService }},
		{flag: &cli.StringFlag{Category: catCloud, Name: "aws-profile", DefaultText: "AWS_PROFILE, else default", Usage: "SigV4's AWS profile"}, path: "endpoint.aws_profile", field: func(c *Config) any { return &c.Cloud.AWSProfile }},
		{flag: &cli.StringFlag{Category: catCloud, Name: "sagemaker-endpoint-name", Usage: "invoke this SageMaker endpoint (URL, path and signing follow; --endpoint-type is the container's API)"}, path: "endpoint.sagemaker.endpoint_name", field: func(c *Config) any { return &c.Cloud.SageMaker.EndpointName }},
		{flag: &cli.StringFlag{Category: catCloud, Hidden: true, Name: "sagemaker-target-model", Usage: "SageMaker multi-model endpoint: the model to invoke (not sent when streaming: AWS refuses it there)"}, path: "endpoint.sagemaker.target_model", field: func(c *Config) any { return &c.Cloud.SageMaker.TargetModel }},
		{flag: &cli.StringFlag{Category: catCloud, Hidden: true, Name: "sagemaker-inference-component-name", Usage: "SageMaker: the inference component to invoke"}, path: "endpoint.sagemaker.inference_component_name", field: func(c *Config) any { return &c.Cloud.SageMaker.InferenceComponent }},
		{flag: &cli.StringFlag{Category: catCloud, Hidden: true, Name: "sagemaker-target-variant", Usage: "SageMaker: the production variant every request goes to"}, path: "endpoint.sagemaker.target_variant", field: func(c *Config) any { return &c.Cloud.SageMaker.TargetVariant }},
	}
}
