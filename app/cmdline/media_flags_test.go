package cmdline

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMediaFlags: AIPerf's --image-* and --audio-* spellings fill the
// config; list flags take every value up to the next flag, as AIPerf's.
func TestMediaFlags(t *testing.T) {
	got := parseProfile(t, "--image-width-mean", "512", "--image-height-mean", "256", "--image-width-stddev", "10",
		"--batch-size-image", "3", "--image-format", "jpeg", "--image-source", "/imgs", "--image-source-sampling", "shuffle-cycle",
		"--audio-length-mean", "2.5", "--audio-sample-rates", "16", "44.1", "--audio-depths", "16", "24",
		"--audio-num-channels", "2", "--batch-size-audio", "2", "--mock-prefill-per-image", "30")
	want := []any{512.0, 256.0, 10.0, 3, "jpeg", "/imgs", "shuffle-cycle", 2.5, []string{"16", "44.1"}, []string{"16", "24"}, 2, 2, 30 * time.Millisecond}
	have := []any{got.ImageWidthMean, got.ImageHeightMean, got.ImageWidthStddev, got.ImageBatchSize, got.ImageFormat, got.ImageSource,
		got.ImageSourceSampling, got.AudioLengthMean, got.AudioSampleRates, got.AudioDepths, got.AudioChannels, got.AudioBatchSize, got.MockPrefillPerImage}
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("media flags (-want +got)\n%s", d)
	}
}
