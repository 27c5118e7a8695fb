//go:build !unix

package mockserver

import "time"

// processCPU is unknown here; the idle check then always passes.
func processCPU() time.Duration { return 0 }

// fdLimit is unknown here.
func fdLimit() int { return 0 }
