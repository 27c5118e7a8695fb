package profile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen/auth"
)

// Hosted endpoints (docs/clouds.md): the cloud's credential chain gives
// every request of the run its credentials, the preflight's included;
// the requests a run makes of a self-hosted server besides its own (its
// facts, its /metrics) are not made of a cloud's.

// openAuth loads the credentials s's cloud asks for (nil: none) and says,
// on log, which cloud and identity the run uses: never the secret. No
// credentials, or a chain that fails, is a usage error naming the flag.
func openAuth(ctx context.Context, s *spec.Spec, log io.Writer) (auth.Authorizer, error) {
	var (
		a   auth.Authorizer
		err error
	)
	switch c := &s.Cloud; c.Auth {
	case spec.AuthSigV4:
		var v *auth.SigV4
		v, err = auth.NewSigV4(ctx, auth.SigV4Options{Region: c.AWS.Region, Service: c.AWS.Service, Profile: c.AWS.Profile, Timeout: c.Timeout})
		if errors.Is(err, auth.ErrNoRegion) {
			return nil, cmdline.Usagef("--aws-region: %v", err)
		}
		if v != nil {
			a = v
		}
	case spec.AuthAzure:
		if s.Request.APIKey != "" {
			fmt.Fprintln(log, "cloud: Azure OpenAI: the api-key header (--api-key)")
			return nil, nil
		}
		var b *auth.Bearer
		if b, err = auth.NewAzure(ctx, c.Timeout); b != nil {
			a = b
		}
	case spec.AuthGoogle:
		var b *auth.Bearer
		if b, err = auth.NewGoogle(ctx, c.Timeout); b != nil {
			a = b
		}
	default:
		return nil, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := err.Error()
		for _, secret := range s.Secrets {
			if len(secret) >= 4 {
				msg = strings.ReplaceAll(msg, secret, cmdline.Redacted)
			}
		}
		return nil, cmdline.Usagef("--auth-type %s: %s", s.Cloud.Auth, sanitize.Line(msg))
	}
	fmt.Fprintln(log, "cloud: "+sanitize.Line(a.Identity()))
	return a, nil
}

// closeAuth stops refreshing the run's credentials.
func (p *prepared) closeAuth() {
	if p.auth != nil {
		p.auth.Close()
	}
}
