package profile

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
	"github.com/surgebench/surge/loadgen/endpoint"
)

// mediaFlags names the flags behind the media fields of datasets.Options.
var mediaFlags = map[string]string{
	"Synthetic.Images.WidthMean": "--image-width-mean", "Synthetic.Images.WidthStddev": "--image-width-stddev",
	"Synthetic.Images.HeightMean": "--image-height-mean", "Synthetic.Images.HeightStddev": "--image-height-stddev",
	"Synthetic.Images.Format": "--image-format", "Synthetic.Images.BatchSize": "--image-batch-size",
	"Synthetic.Images.Source": "--image-source", "Synthetic.Images.Sampling": "--image-source-sampling",
	"Synthetic.Images.MaxCacheBytes": "--image-width-stddev/--image-height-stddev",
	"Synthetic.Audio.LengthMean":     "--audio-length-mean", "Synthetic.Audio.LengthStddev": "--audio-length-stddev",
	"Synthetic.Audio.Format": "--audio-format", "Synthetic.Audio.SampleRates": "--audio-sample-rates",
	"Synthetic.Audio.Depths": "--audio-depths", "Synthetic.Audio.Channels": "--audio-num-channels",
	"Synthetic.Audio.BatchSize": "--audio-batch-size", "Synthetic.Audio.MaxCacheBytes": "--audio-length-stddev",
}

// imageOptions are --image-* as the datasets library takes them.
func (c *config) imageOptions() media.ImageOptions {
	return media.ImageOptions{
		WidthMean: c.ImageWidthMean, WidthStddev: c.ImageWidthStddev,
		HeightMean: c.ImageHeightMean, HeightStddev: c.ImageHeightStddev,
		Format: c.ImageFormat, BatchSize: c.ImageBatchSize, Source: c.ImageSource, Sampling: c.ImageSourceSampling,
	}
}

// audioOptions are --audio-* as the datasets library takes them; the
// lists are parsed here (kHz and bits).
func (c *config) audioOptions() (media.AudioOptions, error) {
	o := media.AudioOptions{LengthMean: c.AudioLengthMean, LengthStddev: c.AudioLengthStddev,
		Format: c.AudioFormat, Channels: c.AudioChannels, BatchSize: c.AudioBatchSize}
	for _, s := range splitList(c.AudioSampleRates) {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return o, cmdline.Usagef("--audio-sample-rates %q: want numbers in kHz, e.g. 16 44.1", s)
		}
		o.SampleRates = append(o.SampleRates, r)
	}
	for _, s := range splitList(c.AudioDepths) {
		d, err := strconv.Atoi(s)
		if err != nil {
			return o, cmdline.Usagef("--audio-depths %q: want bits, e.g. 16 24", s)
		}
		o.Depths = append(o.Depths, d)
	}
	return o, nil
}

// splitList is a list flag's values, each also split at commas.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// validateMedia checks the synthetic media flags against the rest of the
// run: they shape synthetic prompts (a dataset file names its own media)
// and only a type that sends media can carry them.
func (c *config) validateMedia(kind endpoint.Kind) error {
	if c.MockPrefillPerImage < 0 || c.MockPrefillPerAudioSecond < 0 {
		return cmdline.Usagef("--mock-prefill-per-image and --mock-prefill-per-audio-second must be ≥ 0")
	}
	imo, ao := c.imageOptions(), media.AudioOptions{LengthMean: c.AudioLengthMean, BatchSize: c.AudioBatchSize}
	var flag string
	switch {
	case imo.Enabled():
		flag = "--image-width-mean"
	case ao.Enabled():
		flag = "--audio-length-mean"
	default:
		return nil
	}
	switch {
	case c.InputFile != "" || c.PublicDataset != "":
		return cmdline.Usagef("%s: synthetic images and audio go with synthetic prompts; a dataset file names its own (its image/images/audio fields)", flag)
	case !kind.Info().Media:
		return cmdline.Usagef("%s: endpoint type %s cannot send images or audio (use --endpoint-type chat)", flag, kind)
	}
	return nil
}

// syntheticMedia reports whether synthetic turns carry media (then --isl
// may be 0: media alone, as AIPerf allows).
func (c *config) syntheticMedia() bool {
	imo := c.imageOptions()
	ao := media.AudioOptions{LengthMean: c.AudioLengthMean, BatchSize: c.AudioBatchSize}
	return imo.Enabled() || ao.Enabled()
}

// checkMedia refuses a dataset with media for a type that cannot send it.
func checkMedia(ds *datasets.Dataset, ep *endpoint.Endpoint) error {
	if ep.Info().Media {
		return nil
	}
	for _, conv := range ds.Conversations {
		for i := range conv.Turns {
			if len(conv.Turns[i].Media) > 0 {
				return cmdline.Usagef("%s: conversation %s turn %d has images or audio, which endpoint type %s cannot send (use --endpoint-type chat)", ds.Name, conv.ID, i+1, ep.Kind)
			}
		}
	}
	return nil
}

// mediaDigests hashes each distinct media part once (turns share their
// parts' bytes), for the dataset fingerprint.
type mediaDigests map[*byte][sha256.Size]byte

func (m mediaDigests) of(p *media.Part) []byte {
	if len(p.JSON) == 0 {
		return nil
	}
	d, ok := m[&p.JSON[0]]
	if !ok {
		d = sha256.Sum256(p.JSON)
		m[&p.JSON[0]] = d
	}
	return d[:]
}

// mockMediaLine describes the embedded mock's media prices for the log.
func (c *config) mockMediaLine() string {
	if c.MockPrefillPerImage == 0 && c.MockPrefillPerAudioSecond == 0 {
		return ""
	}
	return fmt.Sprintf(", prefill %s per image and %s per second of audio", c.MockPrefillPerImage, c.MockPrefillPerAudioSecond)
}
