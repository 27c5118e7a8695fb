package endpoint

// modelVar, in a path, stands for the model (Endpoint.Path).
const modelVar = "{model}"

// PathSegment escapes s as one URL path segment as the AWS SDKs escape a
// path label: every byte but the unreserved ones (A–Z, a–z, 0–9, "-", ".",
// "_", "~") percent-encoded, so a Bedrock model id's ":" travels as %3A
// and an id cannot add a segment of its own.
func PathSegment(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// awsEvents is a type whose streamed answers are AWS event streams whose
// messages are its events (Bedrock's); jsonArray one whose streams may be
// a JSON array of its events (Gemini's without alt=sse).
type (
	awsEvents interface{ awsEvents() }
	jsonArray interface{ jsonArray() }
)

// EventStreamMessages reports that an AWS event stream answering the
// endpoint carries its events as messages; otherwise the messages'
// payloads carry a stream of its own (SageMaker's serving containers).
func (e *Endpoint) EventStreamMessages() bool {
	_, ok := formats[e.Kind].(awsEvents)
	return ok
}

// JSONArrayStream reports that a streamed JSON answer of the endpoint is
// a JSON array of its events, each read as it arrives.
func (e *Endpoint) JSONArrayStream() bool {
	_, ok := formats[e.Kind].(jsonArray)
	return ok
}
