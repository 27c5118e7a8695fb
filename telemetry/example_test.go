package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/surgebench/surge/telemetry"
)

// Example wires a Collector the way `surge profile` does: NVML when the
// host has it (said once otherwise), the target's /metrics, JSONL sinks.
func Example() {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 12\n")
	}))
	defer target.Close()

	var gpus []telemetry.GPUSource
	if src, err := telemetry.NVML(); err == nil {
		gpus = append(gpus, src)
	} else if !errors.Is(err, telemetry.ErrNVMLUnavailable) {
		fmt.Println("unexpected:", err)
	} // else: log "GPU telemetry: " + err once and go on

	c := telemetry.New(
		telemetry.Interval(20*time.Millisecond),
		telemetry.Start(time.Now()),
		telemetry.GPU(gpus...),
		telemetry.ServerMetrics(target.URL+"/metrics"),
		telemetry.GPUSink(io.Discard),    // gpu_telemetry_export.jsonl
		telemetry.ServerSink(io.Discard), // server_metrics_export.jsonl
		telemetry.Logf(func(format string, args ...any) { fmt.Printf(format+"\n", args...) }),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Run(ctx); err != nil {
		fmt.Println(err)
	}
	running := c.Summary().Servers[target.URL+"/metrics"].Metrics["num_requests_running"]
	fmt.Println(running.Unit, running.Avg, running.Max)
	// Output: requests 12 12
}
