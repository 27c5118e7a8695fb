package media

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Audio formats (AIPerf's --audio-format choices).
const (
	FormatWAV = "wav"
	// FormatMP3 is refused for synthetic audio: Go has no pure-Go MP3
	// encoder in its standard library, and surge links no C encoder.
	FormatMP3 = "mp3"
)

// Bounds on synthetic audio.
const (
	// MinSeconds is the shortest clip (AIPerf's 0.01 s).
	MinSeconds = 0.01
	// MaxSeconds bounds a clip's sampled length.
	MaxSeconds = 3600
	// maxRateKHz bounds a sample rate.
	maxRateKHz = 384
)

// AudioOptions describes the synthetic clips each turn carries, as
// AIPerf's --audio-* options do.
type AudioOptions struct {
	// LengthMean and LengthStddev give each clip's length in seconds:
	// normal, redrawn while under MinSeconds (AIPerf's rule); capped at
	// MaxSeconds.
	LengthMean, LengthStddev float64
	// Format is FormatWAV (""); FormatMP3 is refused with the reason.
	Format string
	// SampleRates are the rates in kHz each clip draws one of (nil: 16).
	SampleRates []float64
	// Depths are the bit depths each clip draws one of: 8, 16, 24 or 32
	// (nil: 16).
	Depths []int
	// Channels is 1 (0) or 2.
	Channels int
	// BatchSize is the number of clips a turn carries; 0 sends none.
	BatchSize int
	// Variants is how many distinct clips each length, rate, depth and
	// channel count has (0: DefaultVariants).
	Variants int
	// MaxCacheBytes bounds the encoded clips kept (0:
	// DefaultMaxCacheBytes).
	MaxCacheBytes int64
	// Seed makes the lengths, the choices and the noise reproducible.
	Seed uint64
}

// Enabled reports whether the options ask for audio: a positive length
// and batch size.
func (o *AudioOptions) Enabled() bool { return o.LengthMean > 0 && o.BatchSize > 0 }

// clipKey is one cached clip.
type clipKey struct {
	samples, rate, depth, channels, variant int
}

// Clips generates a dataset's audio: each turn's Next draws lengths,
// rates and depths, and a clip is encoded once per key, then shared.
type Clips struct {
	o     AudioOptions
	rng   *rand.Rand
	cache map[clipKey]Part
	held  int64
}

// NewClips checks o.
func NewClips(o AudioOptions) (*Clips, error) {
	switch {
	case !finite(o.LengthMean) || o.LengthMean < 0 || o.LengthMean > MaxSeconds:
		return nil, optionErrorf("LengthMean", "must be between 0 and %d seconds, got %g", MaxSeconds, o.LengthMean)
	case o.LengthMean > 0 && o.LengthMean < MinSeconds:
		return nil, optionErrorf("LengthMean", "must be at least %g seconds, got %g", MinSeconds, o.LengthMean)
	case !finite(o.LengthStddev) || o.LengthStddev < 0:
		return nil, optionErrorf("LengthStddev", "must be a finite number ≥ 0, got %g", o.LengthStddev)
	case o.BatchSize < 0:
		return nil, optionErrorf("BatchSize", "must not be negative, got %d", o.BatchSize)
	case o.Variants < 0:
		return nil, optionErrorf("Variants", "must not be negative, got %d", o.Variants)
	case o.MaxCacheBytes < 0:
		return nil, optionErrorf("MaxCacheBytes", "must not be negative, got %d", o.MaxCacheBytes)
	case o.Channels != 0 && o.Channels != 1 && o.Channels != 2:
		return nil, optionErrorf("Channels", "must be 1 (mono) or 2 (stereo), got %d", o.Channels)
	}
	switch f := strings.ToLower(strings.TrimSpace(o.Format)); f {
	case "", FormatWAV:
		o.Format = FormatWAV
	case FormatMP3:
		return nil, optionErrorf("Format", "mp3 is not supported for synthetic audio: Go's standard library has no MP3 encoder and surge links no C one; use wav (a dataset may still name .mp3 files, sent as they are)")
	default:
		return nil, optionErrorf("Format", "%q: want wav", o.Format)
	}
	if len(o.SampleRates) == 0 {
		o.SampleRates = []float64{16}
	}
	for _, r := range o.SampleRates {
		if !finite(r) || r <= 0 || r > maxRateKHz || math.Round(r*1000) < 1 {
			return nil, optionErrorf("SampleRates", "%g kHz: want a rate above 0 and at most %d kHz", r, maxRateKHz)
		}
	}
	if len(o.Depths) == 0 {
		o.Depths = []int{16}
	}
	for _, d := range o.Depths {
		if !slices.Contains([]int{8, 16, 24, 32}, d) {
			return nil, optionErrorf("Depths", "%d bits: want 8, 16, 24 or 32", d)
		}
	}
	if o.Channels == 0 {
		o.Channels = 1
	}
	if o.Variants == 0 {
		o.Variants = DefaultVariants
	}
	if o.MaxCacheBytes == 0 {
		o.MaxCacheBytes = DefaultMaxCacheBytes
	}
	return &Clips{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0xa0d10)), cache: map[clipKey]Part{}}, nil
}

// Next returns a turn's clips: BatchSize of them.
func (c *Clips) Next() ([]Part, error) {
	parts := make([]Part, 0, c.o.BatchSize)
	for range c.o.BatchSize {
		secs := c.o.LengthMean
		if c.o.LengthStddev > 0 {
			for secs = -1; secs < MinSeconds; {
				secs = c.o.LengthMean + c.rng.NormFloat64()*c.o.LengthStddev
			}
		}
		secs = min(secs, MaxSeconds)
		rate := int(math.Round(c.o.SampleRates[c.rng.IntN(len(c.o.SampleRates))] * 1000))
		depth := c.o.Depths[c.rng.IntN(len(c.o.Depths))]
		k := clipKey{samples: max(int(secs*float64(rate)), 1), rate: rate, depth: depth, channels: c.o.Channels, variant: c.rng.IntN(c.o.Variants)}
		p, ok := c.cache[k]
		if !ok {
			p = AudioData(FormatWAV, wav(k, c.o.Seed), float64(k.samples)/float64(rate))
			if c.held+int64(len(p.JSON)) > c.o.MaxCacheBytes {
				return nil, optionErrorf("MaxCacheBytes", "%d MiB reached by %d distinct clips: lower the length stddev, the batch size or the number of conversations",
					c.o.MaxCacheBytes>>20, len(c.cache))
			}
			c.held += int64(len(p.JSON))
			c.cache[k] = p
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// Distinct reports how many clips were encoded and their size.
func (c *Clips) Distinct() (clips int, bytes int64) { return len(c.cache), c.held }

// wav encodes k as a PCM WAV file of Gaussian noise (σ = 0.3 of full
// scale, clipped, as AIPerf's generator), seeded by the key.
func wav(k clipKey, seed uint64) []byte {
	width := k.depth / 8
	data := k.samples * k.channels * width
	b := make([]byte, 44+data)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], uint16(k.channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(k.rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(k.rate*k.channels*width))
	binary.LittleEndian.PutUint16(b[32:], uint16(k.channels*width))
	binary.LittleEndian.PutUint16(b[34:], uint16(k.depth))
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(data))
	rng := rand.New(rand.NewPCG(seed^0x617564696f, uint64(k.samples)<<32^uint64(k.rate)<<8^uint64(k.depth)<<4^uint64(k.channels)<<2^uint64(k.variant)))
	full := float64(int64(1)<<(k.depth-1) - 1)
	for i := 44; i < len(b); i += width {
		v := int64(math.Round(min(max(rng.NormFloat64()*0.3, -1), 1) * full))
		switch k.depth {
		case 8: // 8-bit WAV is unsigned
			b[i] = byte(v + 128)
		case 16:
			binary.LittleEndian.PutUint16(b[i:], uint16(v))
		case 24:
			b[i], b[i+1], b[i+2] = byte(v), byte(v>>8), byte(v>>16)
		case 32:
			binary.LittleEndian.PutUint32(b[i:], uint32(v))
		}
	}
	return b
}

// wavSeconds reads a WAV file's length from its header: the data chunk's
// size over the byte rate (0 when the header cannot say).
func wavSeconds(b []byte) float64 {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return 0
	}
	var byteRate uint32
	for i := 12; i+8 <= len(b); {
		id, size := string(b[i:i+4]), binary.LittleEndian.Uint32(b[i+4:])
		body := i + 8
		switch id {
		case "fmt ":
			if body+12 <= len(b) {
				byteRate = binary.LittleEndian.Uint32(b[body+8:])
			}
		case "data":
			if byteRate == 0 {
				return 0
			}
			n := min(int64(size), int64(len(b)-body))
			return float64(n) / float64(byteRate)
		}
		next := int64(body) + int64(size) + int64(size&1)
		if next > int64(len(b)) {
			return 0
		}
		i = int(next)
	}
	return 0
}
