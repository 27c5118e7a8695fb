package spec

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/bounded"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// maxTemplateBytes bounds a payload_template read from a file.
const maxTemplateBytes = 1 << 20

// aiperfTemplate reads AIPerf's template endpoint form: the request body
// as a Jinja2 payload_template in --extra-inputs (a built-in name, a file
// or the template itself) and the response's text at response_field
// (JMESPath's plain paths), both taken out of the body's extra fields, as
// AIPerf takes them. Without a response_field the text is found where
// AIPerf's auto-detection looks.
func aiperfTemplate(ep *endpoint.Endpoint, c *cmdline.Config) error {
	raw, ok := ep.Extra["payload_template"]
	if !ok {
		return nil
	}
	switch {
	case ep.Kind != endpoint.Template:
		return cmdline.Usagef("--extra-inputs payload_template is the body of AIPerf's template endpoint: give --endpoint-type template (got %s)", ep.Kind)
	case c.EndpointTemplate != "":
		return cmdline.Usagef("--extra-inputs payload_template and --endpoint-template are each the whole body: give one")
	}
	text, ok := raw.(string)
	if !ok {
		// A template that is JSON already (no variables): its text.
		b, err := json.Marshal(raw)
		if err != nil {
			return cmdline.Usagef("--extra-inputs payload_template: %v", err)
		}
		text = string(b)
	}
	name := "(inline)"
	if named, ok := endpoint.NamedTemplate(strings.TrimSpace(text)); ok {
		name, text = strings.TrimSpace(text), named
	} else if path := strings.TrimSpace(text); !strings.ContainsAny(path, "{}\n") && path != "" {
		// AIPerf reads a path that names a file, else takes the text as
		// the template.
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return cmdline.Usagef("--extra-inputs payload_template: %s is a directory, not a template file", path)
		} else if err == nil {
			b, err := bounded.ReadFile(context.Background(), path, maxTemplateBytes)
			if err != nil {
				return cmdline.Usagef("--extra-inputs payload_template: %v", err)
			}
			name, text = path, string(b)
		}
	}
	tpl, err := endpoint.ParseJinjaTemplate(name, text)
	if err != nil {
		return cmdline.Usagef("--extra-inputs %v", err)
	}
	ep.Jinja = tpl
	delete(ep.Extra, "payload_template")
	if rf, ok := ep.Extra["response_field"]; ok {
		delete(ep.Extra, "response_field")
		path, _ := rf.(string)
		if strings.ContainsAny(path, "|*@&()") || strings.Contains(path, "[]") || strings.Contains(path, "[?") {
			return cmdline.Usagef("--extra-inputs response_field %q: surge reads one JSONPath-like path (a.b[0].c), not JMESPath's projections, filters or functions", rf)
		}
		if ep.ResponseField == "" {
			ep.ResponseField = strings.TrimSpace(path)
		}
	}
	return nil
}
