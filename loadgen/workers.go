package loadgen

// workers runs each session on a goroutine of its own, as it always did,
// but reuses the goroutines of sessions that ended: a new goroutine starts
// with a small stack that every request grew again through net/http
// (copying it, ≈ 8% of the client's instructions per request at
// 800 req/s). A session never waits for a worker: with none idle, it gets
// a new goroutine at once.
type workers struct {
	idle chan func() // unbuffered: a send succeeds only if a worker waits
	quit chan struct{}
}

func newWorkers() *workers {
	return &workers{idle: make(chan func()), quit: make(chan struct{})}
}

// run starts job on an idle worker, or on a new one.
func (w *workers) run(job func()) {
	select {
	case w.idle <- job:
	default:
		go w.loop(job)
	}
}

func (w *workers) loop(job func()) {
	for {
		job()
		select {
		case job = <-w.idle:
		case <-w.quit:
			return
		}
	}
}

// stop lets the workers end once their sessions do; run may not follow.
func (w *workers) stop() { close(w.quit) }
