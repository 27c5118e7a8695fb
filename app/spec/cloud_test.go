package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
)

// TestCloudFlags: what --auth-type, --aws-* and --sagemaker-* derive (the
// URL, the path, the signing scope, SageMaker's headers), AIPerf's names
// and aliases read as AIPerf's.
func TestCloudFlags(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	for _, tc := range []struct {
		args                       []string
		url, path, service, region string
		header                     [2]string
	}{
		{args: []string{"--url", "https://abc.execute-api.us-east-1.amazonaws.com/prod", "--auth-type", "sigv4", "--aws-signing-service", "execute-api", "--aws-region", "us-east-1"},
			url: "https://abc.execute-api.us-east-1.amazonaws.com/prod", path: "/v1/chat/completions", service: "execute-api", region: "us-east-1"},
		// The scope read from the host.
		{args: []string{"--url", "https://abc.execute-api.eu-west-3.amazonaws.com/prod", "--auth-type", "sigv4"},
			url: "https://abc.execute-api.eu-west-3.amazonaws.com/prod", path: "/v1/chat/completions", service: "execute-api", region: "eu-west-3"},
		// Bedrock without --url: its endpoint follows from the region.
		{args: []string{"--endpoint-type", "bedrock_converse", "--streaming", "-m", "anthropic.claude-3-haiku-20240307-v1:0", "--auth-type", "sigv4", "--aws-region", "us-west-2"},
			url: "https://bedrock-runtime.us-west-2.amazonaws.com", path: "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream", service: "bedrock", region: "us-west-2"},
		// SageMaker: AIPerf's one flag and a region.
		{args: []string{"--sagemaker-endpoint-name", "my-ep", "--aws-region", "us-west-2", "--streaming", "--sagemaker-inference-component-name", "ic1"},
			url: "https://runtime.sagemaker.us-west-2.amazonaws.com", path: "/endpoints/my-ep/invocations-response-stream", service: "sagemaker", region: "us-west-2",
			header: [2]string{"X-Amzn-Sagemaker-Inference-Component", "ic1"}},
		{args: []string{"--sagemaker-endpoint-name", "my-ep", "--aws-region", "cn-north-1", "--sagemaker-target-model", "a.tar.gz", "--url", "https://vpce-1.sagemaker.cn-north-1.vpce.amazonaws.com.cn"},
			url: "https://vpce-1.sagemaker.cn-north-1.vpce.amazonaws.com.cn", path: "/endpoints/my-ep/invocations", service: "sagemaker", region: "cn-north-1",
			header: [2]string{"X-Amzn-Sagemaker-Target-Model", "a.tar.gz"}},
		// Azure: the key in api-key, the query kept.
		{args: []string{"--url", "https://r.openai.azure.com", "--endpoint", "/openai/deployments/gpt/chat/completions?api-version=2024-10-21", "--auth-type", "azure", "--api-key", "k123"},
			url: "https://r.openai.azure.com", path: "/openai/deployments/gpt/chat/completions?api-version=2024-10-21", header: [2]string{"Api-Key", "k123"}},
	} {
		args := tc.args
		if !strings.Contains(strings.Join(args, " "), "-m ") {
			args = append([]string{"--model", "m"}, args...)
		}
		s, err := parseArgs(t, args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		got := []string{s.Target.URL, s.Endpoint.Path(), s.Cloud.AWS.Service, s.Cloud.AWS.Region}
		want := []string{tc.url, tc.path, tc.service, tc.region}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%v: URL, path, service, region %q, want %q", tc.args, got, want)
		}
		if tc.header[0] != "" && s.Request.Headers.Get(tc.header[0]) != tc.header[1] {
			t.Errorf("%v: %s %q, want %q", tc.args, tc.header[0], s.Request.Headers.Get(tc.header[0]), tc.header[1])
		}
		if s.Request.Headers.Get("Authorization") != "" {
			t.Errorf("%v: an Authorization header before signing", tc.args)
		}
	}
}

func TestCloudFlagErrors(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--auth-type", "oauth", "--url", "h"}, `--auth-type "oauth": want sigv4, azure, google or none`},
		{[]string{"--aws-region", "us-east-1", "--url", "h"}, "--aws-region is for --auth-type sigv4"},
		{[]string{"--aws-service", "bedrock", "--url", "h", "--auth-type", "google"}, "--aws-service is for --auth-type sigv4"},
		{[]string{"--sagemaker-target-variant", "v"}, "--sagemaker-target-variant is for --sagemaker-endpoint-name"},
		{[]string{"--sagemaker-endpoint-name", "my-ep"}, "--sagemaker-endpoint-name needs --aws-region"},
		{[]string{"--sagemaker-endpoint-name", "my-ep", "--aws-region", "evil.com/x"}, `--aws-region "evil.com/x": want an AWS region`},
		{[]string{"--sagemaker-endpoint-name", "my ep", "--aws-region", "us-east-1"}, `--sagemaker-endpoint-name "my ep"`},
		{[]string{"--sagemaker-endpoint-name", "e", "--aws-region", "us-east-1", "--auth-type", "azure"}, "--auth-type azure cannot go with it"},
		{[]string{"--sagemaker-endpoint-name", "e", "--aws-region", "us-east-1", "--endpoint", "/x"}, "the endpoint's name sets the path"},
		{[]string{"--sagemaker-endpoint-name", "e", "--aws-region", "us-east-1", "--endpoint-type", "bedrock_converse"}, "not bedrock_converse"},
		{[]string{"--endpoint-type", "bedrock_converse", "--auth-type", "sigv4"}, "--endpoint-type bedrock_converse without --url needs --aws-region"},
		{[]string{"--url", "https://my.proxy", "--auth-type", "sigv4"}, "--auth-type sigv4 needs --aws-service"},
		{[]string{"--auth-type", "google"}, "--auth-type google needs --url"},
		{[]string{"--url", "h", "--auth-type", "sigv4", "--aws-service", "execute-api", "--api-key", "k"}, "--api-key and --auth-type sigv4"},
		{[]string{"--url", "h", "--auth-type", "google", "--api-key", "k"}, "--api-key and --auth-type google"},
		{[]string{"--url", "h", "--auth-type", "google", "-H", "Authorization: Bearer x"}, "-H Authorization and --auth-type google"},
		{[]string{"--url", "h", "--auth-type", "azure", "--wait-for-model-timeout", "5"}, "--wait-for-model-timeout probes with unsigned requests"},
		{[]string{"--url", "h", "--auth-type", "azure", "--reset-kv-cache"}, "cannot go with --auth-type azure"},
	} {
		args := append([]string{"--model", "m"}, tc.args...)
		_, err := parseArgs(t, args...)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error saying %q", tc.args, err, tc.want)
		}
	}
	// No --model: a cloud's model is asked of nobody.
	c, err := cmdline.ParseProfile("--url", "h", "--auth-type", "google")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(c); err == nil || !strings.Contains(err.Error(), "--auth-type google needs --model") {
		t.Errorf("no --model: %v", err)
	}
}
