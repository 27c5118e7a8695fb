package metrics

import (
	"math"
	"testing"
)

func TestComputeMedia(t *testing.T) {
	t.Parallel()
	base := Record{SentNs: 1e6, EndNs: 11e6, Streamed: true, TokenNs: []int64{5e6, 11e6}, InputTokens: 7}
	for _, tc := range []struct {
		name                 string
		images               int
		seconds              float64
		bytes                int
		wantImages, wantSecs float64
		wantBytes            float64
	}{
		{"text only: no media metrics", 0, 0, 0, math.NaN(), math.NaN(), math.NaN()},
		{"two images", 2, 0, 2_000_000, 2, 0, 2_000_000},
		{"audio", 0, 1.5, 64_000, 0, 1.5, 64_000},
	} {
		r := base
		r.Images, r.AudioSeconds, r.MediaBytes = tc.images, tc.seconds, tc.bytes
		v := Compute(&r, nil)
		for _, c := range []struct {
			tag       Tag
			got, want float64
		}{{ImageCount, v.Get(ImageCount), tc.wantImages}, {AudioDuration, v.Get(AudioDuration), tc.wantSecs}, {MediaBytes, v.Get(MediaBytes), tc.wantBytes}} {
			if !(c.got == c.want || math.IsNaN(c.got) && math.IsNaN(c.want)) {
				t.Errorf("%s: %s = %g, want %g", tc.name, c.tag, c.got, c.want)
			}
		}
		// ISL is the text's alone whatever the media.
		if v.ISL != 7 {
			t.Errorf("%s: ISL %g, want the text's 7", tc.name, v.ISL)
		}
		if f := ComputeFailed(&r, nil); !math.IsNaN(f.Get(ImageCount)) || !math.IsNaN(f.Get(MediaBytes)) {
			t.Errorf("%s: a failed request has media metrics", tc.name)
		}
	}
	for _, tag := range []Tag{ImageCount, AudioDuration, MediaBytes} {
		if _, ok := defOf(tag); !ok {
			t.Errorf("%s is not in RequestDefs", tag)
		}
	}
}
