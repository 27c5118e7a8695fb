package metrics_test

import (
	"fmt"

	"github.com/surgebench/surge/metrics"
)

// Knee reads a sweep's stages and recommends the stage before saturation.
func ExampleKnee() {
	values := []float64{1, 2, 4, 8}
	p95 := []float64{40, 45, 70, 200}
	tput := []float64{10, 19, 35, 36}
	points := make([]metrics.StagePoint, len(values))
	for i, v := range values {
		points[i] = metrics.StagePoint{Value: v, P95TTFTms: p95[i], Throughput: tput[i]}
	}
	knee, op := metrics.Knee(points, metrics.DefaultKneeFactor)
	fmt.Printf("knee at concurrency %v, recommended %v\n", values[knee], values[op])
	// Output:
	// knee at concurrency 8, recommended 4
}
