package telemetry

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surgebench/surge/internal/outbound"
)

// DefaultInterval is the sampling period when none is given
// (--gpu-telemetry-interval's default).
const DefaultInterval = time.Second

// Collector samples GPU and server-metrics sources every interval, keeps
// the samples for Summary, and streams them to JSONL sinks and a callback.
// Build it with New; run it with Run in its own goroutine.
type Collector struct {
	interval time.Duration
	// srvInterval, when set, is the server-metrics period, apart from the
	// GPUs' interval.
	srvInterval time.Duration
	timeout     time.Duration // per GPU round; 0: the interval
	// srvTimeout bounds one /metrics scrape (0: DefaultServerTimeout).
	srvTimeout time.Duration
	start      time.Time
	gpus       []GPUSource
	servers    []ServerSource
	client     *http.Client
	logf       func(format string, args ...any)
	gpuSink    io.Writer
	srvSink    io.Writer
	onSample   func(gpus []GPUSample, server []ServerSample)
	urls       []string
	// measuring says whether the run is past its warmup (nil: always).
	measuring func() bool

	mu         sync.Mutex
	gpuSamples []GPUSample
	srvSamples []ServerSample
	// firstFams and lastFams are each endpoint's first and latest scrape
	// in full, for the summary's counter and histogram deltas; the samples
	// kept in srvSamples drop their families (a long run would otherwise
	// hold every scrape of every family).
	firstFams, lastFams map[string][]Family
	// srvStore keeps what ServerExport needs of every scrape.
	srvStore srvStore
	// from is when the measured window began: the run's start, or the
	// last scrape taken during the warmup.
	from    time.Time
	sinkErr error
	// skipped counts, by source, the ticks that skipped it because its
	// previous scrape was still in flight.
	skipped map[string]int64
	// cbMu serialises onSample calls: each server source reports from a
	// goroutine of its own.
	cbMu sync.Mutex
	// ready is closed once every server source's first scrape has
	// answered or failed (Ready); readyLeft counts the sources yet to.
	ready     chan struct{}
	readyOnce sync.Once
	readyLeft atomic.Int64
	// runFirst and runLast are each endpoint's first and latest sample of
	// the whole run, the warmup's included (RunTokenTotals).
	runFirst, runLast map[string]ServerSample
}

// Option configures a Collector.
type Option func(*Collector)

// Interval sets the sampling period (default 1 s). Each scrape's timeout
// is the interval, so a slow endpoint cannot pile scrapes up.
func Interval(d time.Duration) Option {
	return func(c *Collector) {
		if d > 0 {
			c.interval = d
		}
	}
}

// ServerInterval sets the server-metrics scrape period apart from the
// GPUs' Interval (--server-metrics-interval); default: the same.
func ServerInterval(d time.Duration) Option {
	return func(c *Collector) {
		if d > 0 {
			c.srvInterval = d
		}
	}
}

// Timeout bounds each round of GPU readings (default: the interval). A
// timeout longer than the interval lets a slow source answer at the cost
// of the ticks it holds up (a tick missed is skipped, not queued).
func Timeout(d time.Duration) Option {
	return func(c *Collector) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// DefaultServerTimeout bounds one /metrics scrape when ServerTimeout is
// not given. It is generous, and apart from the interval, because a busy
// server may answer /metrics behind its inference work (llama.cpp took
// 2.4–3.5 s at 16 concurrent requests), and that is when its metrics
// matter most.
const DefaultServerTimeout = 5 * time.Second

// ServerTimeout bounds one /metrics scrape (default DefaultServerTimeout),
// whatever the interval: a scrape that takes longer than the interval is
// kept, stamped with when its answer came, and the ticks it spans start no
// other scrape of that endpoint (skipped, not stacked).
func ServerTimeout(d time.Duration) Option {
	return func(c *Collector) {
		if d > 0 {
			c.srvTimeout = d
		}
	}
}

// scrapeTimeout is the bound on one round's scrapes, for a loop of
// period every.
func (c *Collector) scrapeTimeout(every time.Duration) time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return every
}

// Start sets the time samples' At offsets count from (default: when Run
// starts); pass the run's start so telemetry lines up with requests.
func Start(t time.Time) Option { return func(c *Collector) { c.start = t } }

// GPU adds GPU sources (NVML, DCGM exporters). Sources implementing
// io.Closer are closed when Run returns.
func GPU(sources ...GPUSource) Option {
	return func(c *Collector) {
		for _, s := range sources {
			if s != nil {
				c.gpus = append(c.gpus, s)
			}
		}
	}
}

// ServerMetrics adds inference-server /metrics endpoints, scraped with the
// HTTPClient's client.
func ServerMetrics(urls ...string) Option {
	return func(c *Collector) { c.urls = append(c.urls, urls...) }
}

// ServerSources adds server-metrics sources built elsewhere.
func ServerSources(sources ...ServerSource) Option {
	return func(c *Collector) { c.servers = append(c.servers, sources...) }
}

// HTTPClient sets the client for ServerMetrics URLs (default: a client of
// its own with a small idle pool, separate from the load generator's).
func HTTPClient(client *http.Client) Option { return func(c *Collector) { c.client = client } }

// Logf sets where one-time notices go ("server metrics: URL: …, skipped").
// Default: discarded.
func Logf(f func(format string, args ...any)) Option { return func(c *Collector) { c.logf = f } }

// GPUSink streams every GPU sample as one JSON line
// (gpu_telemetry_export.jsonl).
func GPUSink(w io.Writer) Option { return func(c *Collector) { c.gpuSink = w } }

// ServerSink streams every server sample as one JSON line
// (server_metrics_export.jsonl).
func ServerSink(w io.Writer) Option { return func(c *Collector) { c.srvSink = w } }

// OnSample is called after each sampling round with that round's samples
// (nil for a kind with no source, or not sampled in that round: with a
// ServerInterval the two kinds come in rounds of their own, from two
// goroutines); it must not block.
func OnSample(f func(gpus []GPUSample, server []ServerSample)) Option {
	return func(c *Collector) { c.onSample = f }
}

// Measuring tells the collector whether the run is past its warmup. A
// sample taken during the warmup is a baseline, not part of the run: the
// summaries and the server export leave out every sample until then, and
// counters and histograms count their increase from the warmup's last
// scrape. The JSONL sinks and OnSample still see every sample.
func Measuring(f func() bool) Option { return func(c *Collector) { c.measuring = f } }

// New builds a Collector.
func New(opts ...Option) *Collector {
	c := &Collector{interval: DefaultInterval, logf: func(string, ...any) {}, ready: make(chan struct{})}
	for _, o := range opts {
		o(c)
	}
	if c.client == nil {
		c.client = outbound.NewClient(outbound.WithTransport(outbound.NewTransport(outbound.TransportOptions{MaxIdlePerHost: 4})))
	}
	for _, u := range c.urls {
		c.servers = append(c.servers, Server(u, c.client))
	}
	return c
}

// tracked is a source with its reporting state. A server source's fields
// belong to its scrape in flight while busy is set.
type tracked struct {
	name     string
	ok       bool // has answered at least once
	tried    bool // its first scrape is over (answered or failed)
	off      bool // skipped for the rest of the run
	reported bool // an error has been logged
	// busy is set while a scrape of the source is in flight; slow once a
	// scrape outlasted the interval (noted); skipped counts the ticks a
	// scrape in flight made the loop skip.
	busy    atomic.Bool
	slow    bool
	skipped int64
}

// sourceName is a source's URL or kind, for messages.
func sourceName(s any) string {
	if st, ok := s.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprintf("%T", s)
}

// Run samples every interval until ctx ends, then takes one last GPU
// reading (so energy covers the whole run) and returns. A source that
// fails before it has ever answered is reported once through Logf and
// skipped for the rest of the run; one that fails after answering is
// reported once and retried each interval. Run returns nil, or the first
// error writing a sink.
func (c *Collector) Run(ctx context.Context) error {
	if c.start.IsZero() {
		c.start = time.Now()
	}
	defer c.closeSources()
	defer c.markReady() // however Run ends, nobody waits on it
	if c.readyLeft.Store(int64(len(c.servers))); len(c.servers) == 0 {
		c.markReady()
	}
	gst := make([]tracked, len(c.gpus))
	for i, s := range c.gpus {
		gst[i].name = sourceName(s)
	}
	sst := make([]tracked, len(c.servers))
	for i, s := range c.servers {
		sst[i].name = sourceName(s)
	}
	if len(c.gpus) == 0 && len(c.servers) == 0 {
		<-ctx.Done()
		return nil
	}
	every := c.interval
	var wg sync.WaitGroup
	if len(sst) > 0 {
		// Server metrics in a loop of their own: a slow /metrics never
		// holds up the GPUs' readings.
		srvEvery := cmp.Or(c.srvInterval, every)
		wg.Go(func() { c.serverLoop(ctx, srvEvery, sst) })
	}
	if len(c.gpus) == 0 {
		return c.wait(ctx, &wg)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c.round(ctx, gst, false, c.scrapeTimeout(every))
		select {
		case <-ctx.Done():
			// One last reading from the GPUs, on a context of its own:
			// the energy counter's last value closes the run's total.
			// Bounded as the server scrapes' closing one: a long interval
			// must not hold an interrupted run.
			final := min(c.scrapeTimeout(every), finalScrapeTimeout)
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), final)
			c.round(fctx, gst, true, final)
			cancel()
			return c.wait(ctx, &wg)
		case <-tick.C:
		}
	}
}

// serverLoop starts a scrape of every server source each period until ctx
// ends, then closes the run's readings: a scrape in flight gets up to
// finalScrapeTimeout more to answer, and every other source is scraped
// once more; it records how many ticks each source skipped.
func (c *Collector) serverLoop(ctx context.Context, every time.Duration, sst []tracked) {
	// Scrapes outlive ctx by up to finalScrapeTimeout: one in flight as
	// the run ends is its source's closing reading.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := range sst {
			if sst[i].skipped > 0 {
				if c.skipped == nil {
					c.skipped = map[string]int64{}
				}
				c.skipped[sst[i].name] += sst[i].skipped
			}
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c.serverTick(sctx, every, sst, &wg, false)
		select {
		case <-ctx.Done():
			// The counters' values at the run's end close its totals (a
			// run shorter than the interval had only its first scrape);
			// a source still answering is not asked twice at once.
			stop := time.AfterFunc(finalScrapeTimeout, cancel)
			defer stop.Stop()
			c.serverTick(sctx, every, sst, &wg, true)
			wg.Wait()
			return
		case <-tick.C:
		}
	}
}

// finalScrapeTimeout bounds the scrape at the run's end: the server is
// idle by then, and an interrupted run must not wait long.
const finalScrapeTimeout = 2 * time.Second

// serverTick starts a scrape of each live server source, in a goroutine of
// its own; a source whose previous scrape is still in flight is skipped
// this tick (counted, unless closing: that answer closes the run), not
// scraped twice at once.
func (c *Collector) serverTick(ctx context.Context, every time.Duration, sst []tracked, wg *sync.WaitGroup, closing bool) {
	for i := range sst {
		t := &sst[i]
		if !t.busy.CompareAndSwap(false, true) {
			if !closing {
				t.skipped++ // the loop's own field
			}
			continue
		}
		if t.off { // written by the last scrape before it cleared busy
			t.busy.Store(false)
			continue
		}
		wg.Go(func() {
			defer t.busy.Store(false)
			c.scrapeServer(ctx, every, t, c.servers[i])
		})
	}
}

// scrapeServer scrapes one server source, bounded by the server timeout,
// and keeps the sample stamped with when its answer came: a late answer
// describes the server at that time, not at the tick that asked.
func (c *Collector) scrapeServer(ctx context.Context, every time.Duration, t *tracked, src ServerSource) {
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, cmp.Or(c.srvTimeout, DefaultServerTimeout))
	s, err := src.Sample(sctx)
	cancel()
	now := time.Now()
	if !t.tried {
		t.tried = true
		defer func() {
			if c.readyLeft.Add(-1) == 0 {
				c.markReady()
			}
		}()
	}
	if err != nil {
		if ctx.Err() == nil { // the run ending mid-scrape is not the source's fault
			c.fail(t, "server metrics", err)
		}
		return
	}
	t.ok = true
	s.At, s.WallNs, s.Took = now.Sub(c.start), now.UnixNano(), now.Sub(began)
	if s.Took > every && !t.slow {
		t.slow = true
		c.logf("server metrics: %s: answered in %.1f s, longer than the %v interval: each sample keeps the time its answer came, and ticks while a scrape is in flight are skipped",
			t.name, s.Took.Seconds(), every)
	}
	c.keep(nil, []ServerSample{s})
}

// Ready is closed once every server source has answered its first scrape
// (or failed it), or Run has returned: a run that starts its requests after
// it has counters whose first reading counts none of them.
func (c *Collector) Ready() <-chan struct{} { return c.ready }

func (c *Collector) markReady() { c.readyOnce.Do(func() { close(c.ready) }) }

// RunTokenTotals is what the servers' token counters say they processed
// over the whole run, the warmup included: their increase from each
// endpoint's first scrape (before the run's first request, when the run
// waited for Ready) to its last (after its last answer). ok is false when
// no server exports token counters.
func (c *Collector) RunTokenTotals() (TokenTotals, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := &Data{Servers: map[string]ServerSummary{}}
	for u, first := range c.runFirst {
		d.Servers[u] = serverSummary(u, []ServerSample{first, c.runLast[u]})
	}
	return d.TokenTotals()
}

// SkippedScrapes reports how many ticks skipped a server source because
// its previous scrape was still in flight, by URL (or kind): complete once
// Run has returned.
func (c *Collector) SkippedScrapes() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.skipped)
}

// wait returns the first sink error once ctx has ended and the loops in
// wg have returned.
func (c *Collector) wait(ctx context.Context, wg *sync.WaitGroup) error {
	<-ctx.Done()
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sinkErr
}

// round reads every live GPU source once, in parallel, each bounded by
// the timeout.
func (c *Collector) round(ctx context.Context, gst []tracked, final bool, timeout time.Duration) {
	now := time.Now()
	at := now.Sub(c.start)
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	gres := make([][]GPUSample, len(gst))
	gerr := make([]error, len(gst))
	var wg sync.WaitGroup
	for i := range gst {
		if gst[i].off {
			continue
		}
		wg.Go(func() { gres[i], gerr[i] = c.gpus[i].Sample(ctx) })
	}
	wg.Wait()

	gpus := []GPUSample{}
	for i := range gst {
		if gst[i].off {
			continue
		}
		if gerr[i] != nil {
			// The run ending mid-scrape is not the source's fault.
			if !final && parent.Err() == nil {
				c.fail(&gst[i], "GPU telemetry", gerr[i])
			}
			continue
		}
		gst[i].ok = true
		for _, g := range gres[i] {
			g.At, g.WallNs = at, now.UnixNano()
			gpus = append(gpus, g)
		}
	}
	c.keep(gpus, nil)
}

// keep stores samples, writes them to the sinks and hands them to
// onSample.
func (c *Collector) keep(gpus []GPUSample, servers []ServerSample) {
	baseline := c.measuring != nil && !c.measuring()
	c.mu.Lock()
	c.writeLines(c.gpuSink, gpus)
	c.writeLines(c.srvSink, servers)
	if baseline && (len(gpus) > 0 || len(servers) > 0) {
		// The warmup's: what came before is dropped, and the window
		// starts here.
		c.gpuSamples, c.srvSamples = c.gpuSamples[:0], c.srvSamples[:0]
		for _, g := range gpus {
			c.from = latest(c.from, g.WallNs)
		}
		for _, s := range servers {
			c.from = latest(c.from, s.WallNs)
		}
	}
	if !baseline {
		c.gpuSamples = append(c.gpuSamples, gpus...)
	}
	for i := range servers {
		s := &servers[i]
		c.srvStore.add(s, baseline)
		if s.Families != nil {
			if c.firstFams == nil {
				c.firstFams, c.lastFams = map[string][]Family{}, map[string][]Family{}
			}
			if _, ok := c.firstFams[s.URL]; !ok || baseline {
				c.firstFams[s.URL] = s.Families
			}
			c.lastFams[s.URL] = s.Families
			s.Families = nil
		}
	}
	if !baseline {
		c.srvSamples = append(c.srvSamples, servers...)
	}
	for _, s := range servers {
		if c.runFirst == nil {
			c.runFirst, c.runLast = map[string]ServerSample{}, map[string]ServerSample{}
		}
		if _, ok := c.runFirst[s.URL]; !ok {
			c.runFirst[s.URL] = s
		}
		c.runLast[s.URL] = s
	}
	c.mu.Unlock()
	if c.onSample != nil && (len(gpus) > 0 || len(servers) > 0) {
		c.cbMu.Lock()
		defer c.cbMu.Unlock()
		c.onSample(gpus, servers)
	}
}

// latest is the later of t and the wall time ns.
func latest(t time.Time, ns int64) time.Time {
	if u := time.Unix(0, ns); u.After(t) {
		return u
	}
	return t
}

// fail reports a source's error once and, if it never answered, turns it
// off.
func (c *Collector) fail(t *tracked, what string, err error) {
	if !t.ok {
		t.off = true
		c.logf("%s: %s: %s, skipped", what, t.name, describe(err))
		return
	}
	if !t.reported {
		t.reported = true
		c.logf("%s: %s: %s (retrying; further errors not reported)", what, t.name, describe(err))
	}
}

// describe words a scrape error for the one-line notice.
func describe(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	// *url.Error repeats the URL the notice already names.
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// writeLines appends one JSON line per sample; the first write error is
// kept and stops further writes to that sink. Called with c.mu held.
func (c *Collector) writeLines(w io.Writer, samples any) {
	if w == nil || c.sinkErr != nil {
		return
	}
	var buf []byte
	appendLine := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			c.sinkErr = fmt.Errorf("telemetry export: %w", err)
			return
		}
		buf = append(append(buf, b...), '\n')
	}
	switch s := samples.(type) {
	case []GPUSample:
		for i := range s {
			appendLine(aiperfGPU(s[i]))
		}
	case []ServerSample:
		for i := range s {
			appendLine(aiperfServer(s[i]))
		}
	}
	if len(buf) == 0 || c.sinkErr != nil {
		return
	}
	if _, err := w.Write(buf); err != nil {
		c.sinkErr = fmt.Errorf("telemetry export: %w", err)
	}
}

// closeSources closes GPU sources that hold resources (NVML).
func (c *Collector) closeSources() {
	for _, s := range c.gpus {
		if cl, ok := s.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				c.logf("GPU telemetry: %s: %v", sourceName(s), err)
			}
		}
	}
}

// GPUSamples returns a copy of every GPU sample so far.
func (c *Collector) GPUSamples() []GPUSample {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.gpuSamples)
}

// ServerSamples returns a copy of every server sample so far.
func (c *Collector) ServerSamples() []ServerSample {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.srvSamples)
}
