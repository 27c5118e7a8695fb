package spec

import (
	"github.com/surgebench/surge/app/cmdline"
)

// parseNative checks --cells and --sketch-metrics (taken as surge
// computes the same) and applies --synthesis-idle-gap-cap to a recorded
// trace's replay unless --trace-idle-gap-cap-seconds gave the cap.
func parseNative(s *Spec, c *cmdline.Config) error {
	if c.Cells < 0 {
		return cmdline.Usagef("--cells must be ≥ 1, got %d", c.Cells)
	}
	v := c.SynthesisIdleGapCap
	r := &s.Dataset.Replay
	if v == "" || r.TraceIdleGapCapSet {
		return nil
	}
	if v == "null" || v == "none" || v == "None" {
		return nil // AIPerf's null: the recorded timeline as it is
	}
	d, set, err := seconds("--synthesis-idle-gap-cap", v, false)
	if err != nil {
		return err
	}
	recorded := c.HFWekaDataset != "" || c.PublicDataset == "weka_hf" || c.CustomDatasetType == "weka" ||
		c.CustomDatasetType == "" && c.InputFile != ""
	if !recorded {
		kind := c.CustomDatasetType
		if kind == "" {
			kind = "synthetic"
		}
		return cmdline.Usagef("--synthesis-idle-gap-cap shortens a recorded trace's idle gaps (weka): a %s dataset has none", kind)
	}
	r.TraceIdleGapCap, r.TraceIdleGapCapSet = d, set
	return nil
}
