package metrics

// DefineStage names stage i of a live session (a dashboard key, the
// control port or a capacity-search probe started it): its mode
// ("concurrency" or "request_rate") and target. Stages are defined in
// order as they start; once more than one is defined, the summary lists
// each with its own statistics, as a sweep's. Safe to call while records
// flow.
func (c *Collector) DefineStage(i int, mode string, value float64) {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	for len(c.stageDef) <= i {
		c.stageDef = append(c.stageDef, StageSummary{Index: len(c.stageDef)})
	}
	c.stageDef[i] = StageSummary{Index: i, Mode: mode, Value: value}
}

// stageDefAt is stage i's definition (only its index when undefined).
func (c *Collector) stageDefAt(i int) StageSummary {
	c.stageMu.Lock()
	defer c.stageMu.Unlock()
	if i < len(c.stageDef) {
		return c.stageDef[i]
	}
	return StageSummary{Index: i}
}
