package metrics

// ErrClientResources is the error type of a request the client could not
// send for want of its own resources (EMFILE, ENFILE: out of file
// descriptors). The server never saw it: such a failure is the client's,
// not the server's.
const ErrClientResources = "client_fd_exhausted"

// ClientSide reports whether the failure is the client's own, not the
// server's.
func (e Error) ClientSide() bool { return e.Type == ErrClientResources }

// ErrEmptyResponse is the error type of a response that ended cleanly
// with no output at all (no content, reasoning or tool-call text): AIPerf's
// name for a record with no content responses. Such a request has no TTFT,
// and an OSL of 0 would pull the averages down unseen.
const ErrEmptyResponse = "InvalidInferenceResultError"

// EmptyResponses counts the summary's failures that were responses with
// no output (ErrEmptyResponse).
func (s *Summary) EmptyResponses() int64 {
	var n int64
	for _, e := range s.Errors {
		if e.Details.Type == ErrEmptyResponse {
			n += e.Count
		}
	}
	return n
}

// ErrRedirect is the error type of a 3xx response that came back
// unfollowed (loadgen names it so).
const ErrRedirect = "redirect"

// Redirects counts the summary's failures that were redirects not
// followed.
func (s *Summary) Redirects() int64 {
	var n int64
	for _, e := range s.Errors {
		if e.Details.Type == ErrRedirect {
			n += e.Count
		}
	}
	return n
}

// ClientSideErrors counts the summary's failures that were the client's
// own (ClientSide), for a summary to say which side failed.
func (s *Summary) ClientSideErrors() int64 {
	var n int64
	for _, e := range s.Errors {
		if e.Details.ClientSide() {
			n += e.Count
		}
	}
	return n
}

// ErrSessionLimit is the error type of the request a session did not
// send: the conversation would have passed one of the client's session
// limits (a reply's tool calls or their arguments, the context's tokens
// or bytes), and the session ended there. The server never saw it.
const ErrSessionLimit = "session_limit"

// SessionLimits counts the summary's sessions that ended at a session
// limit (ErrSessionLimit).
func (s *Summary) SessionLimits() int64 {
	var n int64
	for _, e := range s.Errors {
		if e.Details.Type == ErrSessionLimit {
			n += e.Count
		}
	}
	return n
}
