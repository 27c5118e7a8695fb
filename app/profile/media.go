package profile

import (
	"crypto/sha256"
	"fmt"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
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

// checkMedia refuses a dataset with media for a type that cannot send it.
// A dataset built on demand has none: synthetic media are held.
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
func mockMediaLine(t *spec.Target) string {
	if t.MockPrefillPerImage == 0 && t.MockPrefillPerAudioSecond == 0 {
		return ""
	}
	return fmt.Sprintf(", prefill %s per image and %s per second of audio", t.MockPrefillPerImage, t.MockPrefillPerAudioSecond)
}
