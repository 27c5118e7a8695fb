//go:build !linux

package loadgen

// RaiseFDLimit does nothing here: the limit is not known, and every
// concurrency is taken to fit.
func RaiseFDLimit(concurrency int) (FDLimit, error) {
	return FDLimit{Need: uint64(max(concurrency, 0)) + FDMargin}, nil
}
