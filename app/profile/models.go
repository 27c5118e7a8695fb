package profile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/internal/outbound"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics/export"
)

// maxModelList bounds the /v1/models answer read for the model name: a
// list of a few hundred models fits many times over.
const maxModelList = 1 << 20

// serverModels asks target's /v1/models for the models it serves, with
// the run's headers (its API key included) and no redirect followed (the
// headers stay with the target), within timeout.
func serverModels(ctx context.Context, target string, headers http.Header, timeout time.Duration) ([]string, error) {
	u, err := loadgen.RequestURL(target, "/v1/models")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header = headers.Clone()
	client := outbound.NewClient(outbound.NoRedirects())
	resp, err := client.Do(req)
	if err != nil {
		return nil, errors.New(unwrapErr(err))
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	b, err := outbound.ReadBody(ctx, resp, maxModelList, "the answer")
	if err != nil {
		return nil, err
	}
	return parseModelList(b)
}

// parseModelList reads OpenAI's model list, {"data": [{"id": …}, …]}:
// the ids in the server's order, leaving out one that is empty, over 512
// bytes, or holds a character a terminal would obey (it names the model
// every request sends and every screen shows).
func parseModelList(b []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("not a model list: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		if id := strings.TrimSpace(m.ID); id != "" && len(id) <= 512 && sanitize.Index(id) < 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, errors.New("it lists no model")
	}
	return ids, nil
}

// modelFromServer names the model when no --model was given and the
// target is a real server: the first its /v1/models lists, said on log.
// When it names none, the fallback stays and the returned warning says
// why: the caller prints it once the preflight found the server there (a
// server that is not is the one thing to say). With
// --wait-for-model-timeout the server may still be starting: it is asked
// again until that passes.
func (p *prepared) modelFromServer(ctx context.Context, log io.Writer) (warning string) {
	t := &p.s.Target
	if !t.ModelFromServer || t.Mock || len(t.Models) > 1 {
		return ""
	}
	target := t.URL
	headers := p.s.Request.Headers.Clone()
	p.s.Endpoint.SetHeaders(headers)
	deadline := time.Now().Add(t.Wait.Timeout)
	var ids []string
	var err error
	for {
		if ids, err = serverModels(ctx, target, headers, probeTimeout); err == nil || !time.Now().Before(deadline) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(max(t.Wait.Interval, time.Second)):
		}
	}
	where := cmdline.RedactURL(target)
	if err != nil {
		return export.FormatWarning(fmt.Sprintf("no --model given and %s/v1/models named none (%v): sending model %q", strings.TrimRight(where, "/"), err, t.Model()), p.verbose(), p.s.Columns)
	}
	name := ids[0]
	shownIDs := make([]string, min(len(ids), 5))
	for i := range shownIDs {
		shownIDs[i] = sanitize.Line(ids[i]) // a server's names, shown escaped
	}
	if len(ids) == 1 {
		fmt.Fprintf(log, "model: %s, the one the server lists (no --model given)\n", shownIDs[0])
	} else {
		more := ""
		if len(ids) > len(shownIDs) {
			more = ", …"
		}
		fmt.Fprintf(log, "model: %s, the first of the %d the server lists (%s%s; give --model to pick another)\n", shownIDs[0], len(ids), strings.Join(shownIDs, ", "), more)
	}
	p.s = p.s.WithModel(name)
	return ""
}
