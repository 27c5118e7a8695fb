package profile

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/internal/sanitize"
	"github.com/surgebench/surge/loadgen"
	"github.com/surgebench/surge/metrics/fingerprint"
	"github.com/surgebench/surge/telemetry/serverinfo"
)

// probeTimeout bounds asking the server what it is before the run: a
// server that answers none of the paths asked costs no more.
const probeTimeout = 4 * time.Second

// probeServer asks the target what it is, one request at a time, each on
// a connection closed with its answer (a small server's few HTTP threads
// must not be held): first for run_info.server, the history's engine and
// version (what the engine's own endpoints say: serverinfo), then for the
// fingerprint (/v1/models, its version header, its /metrics families).
// Either is nil when the server said nothing of it.
func probeServer(ctx context.Context, target string, headers http.Header, log cmdline.Logger) (*fingerprint.Server, *serverinfo.Facts) {
	u, err := loadgen.BaseURL(target)
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	client := probeClient()
	defer client.CloseIdleConnections()
	base := u.Scheme + "://" + u.Host
	facts, _ := serverinfo.Probe(ctx, base, serverinfo.WithClient(client), serverinfo.WithHeader(headers),
		serverinfo.WithSkipped(func(err error) { log.Debugf("server facts: %s: not read", sanitize.Line(err.Error())) }))
	s, err := fingerprint.Probe(ctx, client, base, headers)
	if err != nil {
		log.Debugf("fingerprint: what %s could not say of itself: %v", cmdline.RedactURL(base), err)
	}
	if s.Empty() {
		s = nil
	}
	return s, facts
}

// fingerprint hashes what the run measured: the workload part of the
// configuration, the dataset's conversations, the tokenizer, surge's
// version and the server's own account of itself.
func (p *prepared) fingerprint(inputConfig map[string]any, server *fingerprint.Server) *fingerprint.Fingerprint {
	f := &fingerprint.Fingerprint{
		Config:     fingerprint.Config(inputConfig),
		Dataset:    datasetSum(p.ds),
		Surge:      p.s.Version,
		ServerInfo: server,
	}
	// The tokenizer that built the prompts; without one, the embedded
	// Qwen3 (its digest is precomputed: nothing here parses it).
	d := tokenizer.DefaultDigest()
	if t, ok := p.builder.(interface{ Digest() [32]byte }); ok {
		d = t.Digest()
	}
	f.Tokenizer = fingerprint.Short(d[:])
	f.Seal()
	return f
}

// datasetSum hashes the dataset as it defines its turns (content, output
// cap, timing, extra fields, passages, media), not the bodies sent: a
// multi-turn body carries the server's earlier answers, and a
// duration-bound run sends as many as the server allows, so bodies would
// differ between servers given the same workload. It hashes the count of
// conversations and a bounded sample of them (fingerprint.Sample), each
// turn's content by its start: a long trace or a dataset built on demand
// costs no more than a short one.
func datasetSum(ds *datasets.Dataset) string {
	smp := fingerprint.NewSample(int64(ds.Len()))
	var buf []byte
	digests := mediaDigests{}
	field := func(b []byte) {
		buf = binary.AppendUvarint(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	for i := range smp.Taken() {
		c := ds.Conversation(int(i))
		buf = buf[:0]
		field([]byte(c.SystemPrompt))
		per := max(fingerprint.SampleItemBytes/max(len(c.Turns), 1)-64, 256) // the item's room, shared by its turns
		for j := range c.Turns {
			t := &c.Turns[j]
			field([]byte(t.ContentPrefix(per)))
			buf = binary.AppendVarint(buf, int64(t.MaxTokens))
			buf = binary.AppendVarint(buf, int64(t.Delay))
			buf = binary.AppendVarint(buf, int64(t.Timestamp))
			if t.Extra != nil {
				b, _ := json.Marshal(t.Extra) // sorted keys: canonical
				field(b)
			}
			for _, ps := range t.Passages {
				field([]byte(ps))
			}
			for k := range t.Media {
				field(digests.of(&t.Media[k]))
			}
		}
		smp.Add(i, c.ID, len(c.Turns), buf)
	}
	return smp.Sum()
}

// withGPUs adds the GPUs NVML named to what the server said (the server
// is taken to run where the client reads NVML, as its GPU telemetry is).
func withGPUs(f *serverinfo.Facts, gpus []serverinfo.GPU) *serverinfo.Facts {
	if len(gpus) == 0 {
		return f
	}
	if f == nil {
		f = &serverinfo.Facts{}
	}
	f.GPUs = gpus
	return f
}
