package endpoint

import (
	"encoding/json"

	"github.com/surgebench/surge/metrics"
)

// responses is OpenAI's Responses API: input items in; streamed
// response.* events (output_text.delta, reasoning_*.delta,
// function_call_arguments.delta, completed) or one response object out.
type responses struct{}

func init() { Register(Responses, responses{}) }

func (responses) Info() Info {
	return Info{Path: "/v1/responses", Streams: true, ProducesTokens: true, CapField: "max_output_tokens"}
}

func (responses) Body(e *Endpoint, r *Request) ([]byte, error) {
	body := make(map[string]any, 6+len(e.Extra)+len(r.Turn.Extra))
	body["model"] = e.ModelFor(r.Turn)
	body["input"] = responsesInput(chatMessages(r, false))
	if len(r.Turn.Tools) > 0 {
		body["tools"] = responsesTools(r.Turn.Tools)
	}
	if r.System != "" {
		body["instructions"] = r.System
	}
	if r.Turn.MaxTokens > 0 {
		body["max_output_tokens"] = r.Turn.MaxTokens
	}
	if e.Streaming {
		body["stream"] = true
	}
	return jsonBody(e, r.Turn, body)
}

func (responses) Decoder(*Endpoint) Decoder { return responsesDecoder{} }

type responsesDecoder struct{}

// Event reads one streamed event. The event type is taken from the data's
// "type" (servers repeat it in the SSE event field); the delta is appended
// to the text first and moved to reasoning or dropped once the type is
// known, since JSON does not promise "type" comes first.
func (responsesDecoder) Event(_, data []byte, out *Output) (Delta, error) {
	var (
		d      Delta
		typ    []byte
		top    metrics.Error // the "error" event's own code and message
		status []byte
		// index is the event's output_index; item and itemType the
		// function_call item an output_item event carries (its call_id and
		// name go to the tool calls from item on).
		index    int32
		itemType []byte
	)
	n := len(out.Text)
	tools := &out.Tools
	mark := tools.mark()
	item := -1
	s := scanner{b: data}
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "type":
			if s.peek() != '"' {
				return s.skip()
			}
			v, err := s.rawKey()
			typ = v
			return err
		case "delta":
			if s.peek() != '"' {
				return s.skip()
			}
			var err error
			out.Text, err = s.str(out.Text)
			return err
		case "response":
			if s.peek() != '{' {
				return s.skip()
			}
			return s.object(func(key []byte) error {
				switch string(key) {
				case "usage":
					return parseUsage(&s, &d.Usage)
				case "error":
					e, err := parseErrorValue(&s)
					d.Err = e
					return err
				case "status":
					if s.peek() != '"' {
						return s.skip()
					}
					v, err := s.rawKey()
					status = v
					return err
				default:
					return s.skip()
				}
			})
		case "code", "message":
			return errorField(&s, &top, key)
		case "output_index":
			if s.peek() == 'n' {
				return s.literal("null")
			}
			v, err := s.number()
			index = int32(v)
			return err
		case "item":
			item = tools.mark()
			var err error
			itemType, err = toolHead(&s, tools, "call_id")
			return err
		default:
			return s.skip()
		}
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		out.Text = out.Text[:n]
		tools.drop(mark)
		return Delta{}, syntaxError(data)
	}
	if typ == nil {
		out.Text = out.Text[:n]
		tools.drop(mark)
		return Delta{}, missing("type")
	}
	if item >= 0 {
		// A function call's id and name come with the item that opens it;
		// any other item's fields are not a call's.
		if string(typ) == "response.output_item.added" && string(itemType) == "function_call" {
			tools.setCall(item, index)
		} else {
			tools.drop(item)
		}
	}
	grew := len(out.Text) > n
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta":
		d.Content = grew
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		out.Reasoning = append(out.Reasoning, out.Text[n:]...)
		out.Text = out.Text[:n]
		d.Reasoning = grew
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		tools.add(index, toolArgs, out.Text[n:])
		out.Text = out.Text[:n]
		d.ToolCall = grew
	case "response.completed", "response.incomplete":
		out.Text = out.Text[:n]
		d.Finished, d.Done = true, true
		d.Err = nil
	case "response.failed":
		out.Text = out.Text[:n]
		if d.Err == nil {
			d.Err = &metrics.Error{Message: "response failed (status " + string(status) + ")"}
		}
	case "error":
		out.Text = out.Text[:n]
		e := top
		d.Err = &e
	default:
		// Lifecycle events (created, in_progress, output_item.*,
		// content_part.*, *.done) and deltas of outputs not timed (audio).
		out.Text = out.Text[:n]
		d.Err, d.Usage = nil, metrics.Usage{}
	}
	if d.Err != nil && d.Err.Type == "" {
		d.Err.Type = "error"
	}
	return d, nil
}

// responseObject is the part of a non-streamed response that is read.
type responseObject struct {
	Status string `json:"status"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		CallID    string `json:"call_id"`
	} `json:"output"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// Body reads a whole response object; a body is read once per request, so
// encoding/json's cost does not matter here.
func (responsesDecoder) Body(data []byte, out *Output) (Delta, error) {
	var r responseObject
	if err := json.Unmarshal(data, &r); err != nil {
		return Delta{}, syntaxError(data)
	}
	var d Delta
	if e := bodyError(r.Error); e != nil {
		d.Err = e
		return d, nil
	}
	if r.Output == nil {
		return Delta{}, missing("output")
	}
	for i, item := range r.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" || c.Type == "refusal" {
					out.Text = append(out.Text, c.Text...)
					d.Content = d.Content || c.Text != ""
				}
			}
		case "reasoning":
			for _, c := range item.Content {
				out.Reasoning = append(out.Reasoning, c.Text...)
			}
			if len(item.Content) == 0 {
				for _, sm := range item.Summary {
					out.Reasoning = append(out.Reasoning, sm.Text...)
				}
			}
			d.Reasoning = d.Reasoning || len(out.Reasoning) > 0
		case "function_call":
			out.Tools.add(int32(i), toolID, []byte(item.CallID))
			out.Tools.add(int32(i), toolName, []byte(item.Name))
			out.Tools.add(int32(i), toolArgs, []byte(item.Arguments))
			d.ToolCall = true
		}
	}
	d.Finished = r.Status == "completed" || r.Status == "incomplete"
	d.Usage = bodyUsage(r.Usage)
	return d, nil
}

// bodyError reads an "error" member of a whole body: an object with a
// message, type and code, or a string; nil for null or absent.
func bodyError(raw json.RawMessage) *metrics.Error {
	if len(raw) == 0 {
		return nil
	}
	s := scanner{b: raw}
	e, err := parseErrorValue(&s)
	if err != nil || e == nil {
		return nil
	}
	if e.Type == "" {
		e.Type = "error"
	}
	return e
}
