package loadgen

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// BaseURL parses a server address: the scheme optional
// (http when missing), http or https, a host required, any path kept. It
// is the one place a target address is normalised: RequestURL joins an
// endpoint's path to it, and the app derives the default /metrics URL from
// it. Errors say "server URL"; the app names its flag.
func BaseURL(raw string) (*url.URL, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return nil, errors.New("server URL is empty")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("server URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("server URL %q has no host", raw)
	}
	return u, nil
}
