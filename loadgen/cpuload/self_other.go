//go:build !unix

package cpuload

import (
	"errors"
	"time"
)

// selfCPU is not measured here.
func selfCPU() (time.Duration, error) { return 0, errors.New("cpuload: no getrusage on this system") }
