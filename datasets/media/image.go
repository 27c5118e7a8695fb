package media

import (
	"bytes"
	"context"
	"fmt"
	"image"
	_ "image/gif" // source folders may hold GIFs
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/surgebench/surge/internal/bounded"
)

// Image formats (AIPerf's --image-format choices).
const (
	FormatPNG    = "png"
	FormatJPEG   = "jpeg"
	FormatRandom = "random"
)

// Image sources (AIPerf's --image-source): seeded noise, or a folder
// named by its path.
const (
	SourceNoise = "noise"
	// SourceAssets is AIPerf's four bundled photos, which surge does not
	// ship: it is refused with that reason.
	SourceAssets = "assets"
)

// Source sampling strategies (AIPerf's --image-source-sampling): which
// source image each generated image starts from.
const (
	SampleRandom     = "random-with-replacement"
	SampleShuffle    = "shuffle-cycle"
	SampleSequential = "sequential-cycle"
)

// Bounds on what an image option or source may ask for.
const (
	// MaxSide bounds a sampled width or height in pixels.
	MaxSide = 16384
	// DefaultVariants is how many distinct noise images each size has
	// (AIPerf's bundled source set has four photos).
	DefaultVariants = 4
	// DefaultMaxFileBytes bounds one media file read from disk.
	DefaultMaxFileBytes = 32 << 20
	// DefaultMaxCacheBytes bounds the encoded media one set keeps.
	DefaultMaxCacheBytes = 1 << 30
	// maxSourcePixels bounds a source image's decoded size (a
	// decompression bomb is refused before it is decoded).
	maxSourcePixels = 64 << 20
	// maxSources bounds the images a source folder may hold.
	maxSources = 4096
)

// ImageOptions describes the synthetic images each turn carries, as
// AIPerf's --image-* options do.
type ImageOptions struct {
	// WidthMean, WidthStddev, HeightMean and HeightStddev give each
	// image's size in pixels: normal, redrawn while negative, rounded up,
	// at least 1 and at most MaxSide.
	WidthMean, WidthStddev, HeightMean, HeightStddev float64
	// Format is FormatPNG (""), FormatJPEG or FormatRandom (each image
	// either).
	Format string
	// BatchSize is the number of images a turn carries; 0 sends none.
	BatchSize int
	// Source is SourceNoise ("") or a folder whose PNG, JPEG and GIF files
	// are resized to each sampled size.
	Source string
	// Sampling picks the source image of each generated image from a
	// folder: SampleRandom (""), SampleShuffle or SampleSequential. Noise
	// has no finite pool: only SampleRandom.
	Sampling string
	// Variants is how many distinct noise images each size has (0:
	// DefaultVariants): turns of one size draw among them, so a server's
	// multimodal cache sees that many distinct images per size.
	Variants int
	// MaxFileBytes bounds a source file (0: DefaultMaxFileBytes);
	// MaxCacheBytes the encoded images kept (0: DefaultMaxCacheBytes).
	MaxFileBytes, MaxCacheBytes int64
	// Seed makes the sizes, the choices and the noise reproducible.
	Seed uint64
}

// Enabled reports whether the options ask for images at all: a positive
// width and height mean and batch size (AIPerf sends images when both
// means are positive).
func (o *ImageOptions) Enabled() bool {
	return o.WidthMean > 0 && o.HeightMean > 0 && o.BatchSize > 0
}

// imageKey is one cached encoding: a source (a folder's image, or a noise
// variant), a size and a format.
type imageKey struct {
	src, w, h int
	format    string
}

// source is a folder's image: its path and file bytes, decoded when a
// size of it is first asked for.
type source struct {
	path string
	data []byte
}

// Images generates a dataset's images: each turn's Next draws sizes,
// formats and sources, and an image is encoded once per source, size and
// format, then shared.
type Images struct {
	o       ImageOptions
	rng     *rand.Rand
	sources []source
	decoded map[int]*image.RGBA // a folder's images, by index, once decoded
	cache   map[imageKey]Part
	held    int64 // bytes of the cached encodings
	order   []int // the current cycle of a shuffle or sequential sampling
	next    int   // the position in order
}

// NewImages checks o and, for a folder source, reads its images (each at
// most MaxFileBytes).
func NewImages(o ImageOptions) (*Images, error) {
	switch {
	case !finite(o.WidthMean) || o.WidthMean < 0 || o.WidthMean > MaxSide:
		return nil, optionErrorf("WidthMean", "must be between 0 and %d pixels, got %g", MaxSide, o.WidthMean)
	case !finite(o.HeightMean) || o.HeightMean < 0 || o.HeightMean > MaxSide:
		return nil, optionErrorf("HeightMean", "must be between 0 and %d pixels, got %g", MaxSide, o.HeightMean)
	case !finite(o.WidthStddev) || o.WidthStddev < 0:
		return nil, optionErrorf("WidthStddev", "must be a finite number ≥ 0, got %g", o.WidthStddev)
	case !finite(o.HeightStddev) || o.HeightStddev < 0:
		return nil, optionErrorf("HeightStddev", "must be a finite number ≥ 0, got %g", o.HeightStddev)
	case o.BatchSize < 0:
		return nil, optionErrorf("BatchSize", "must not be negative, got %d", o.BatchSize)
	case o.Variants < 0:
		return nil, optionErrorf("Variants", "must not be negative, got %d", o.Variants)
	case o.MaxFileBytes < 0 || o.MaxCacheBytes < 0:
		return nil, optionErrorf("MaxFileBytes", "and MaxCacheBytes must not be negative")
	}
	o.Format = strings.ToLower(strings.TrimSpace(o.Format))
	switch o.Format {
	case "":
		o.Format = FormatPNG
	case "jpg":
		o.Format = FormatJPEG
	case FormatPNG, FormatJPEG, FormatRandom:
	default:
		return nil, optionErrorf("Format", "%q: want png, jpeg or random", o.Format)
	}
	o.Sampling = strings.ToLower(strings.TrimSpace(o.Sampling))
	switch o.Sampling {
	case "":
		o.Sampling = SampleRandom
	case SampleRandom, SampleShuffle, SampleSequential:
	default:
		return nil, optionErrorf("Sampling", "%q: want %s, %s or %s", o.Sampling, SampleRandom, SampleShuffle, SampleSequential)
	}
	if o.Variants == 0 {
		o.Variants = DefaultVariants
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxCacheBytes == 0 {
		o.MaxCacheBytes = DefaultMaxCacheBytes
	}
	s := &Images{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x1a6e)), cache: map[imageKey]Part{}, decoded: map[int]*image.RGBA{}}
	switch src := strings.TrimSpace(o.Source); src {
	case "", SourceNoise:
		if o.Sampling != SampleRandom {
			return nil, optionErrorf("Sampling", "%s needs a folder source: noise has no finite pool (only %s)", o.Sampling, SampleRandom)
		}
	case SourceAssets:
		return nil, optionErrorf("Source", "assets: surge does not ship AIPerf's four sample photos; give a folder of images, or noise")
	default:
		var err error
		if s.sources, err = readSources(src, o.MaxFileBytes); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// readSources reads a folder's image files (by extension), sorted by name.
func readSources(dir string, maxBytes int64) ([]source, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &OptionError{Option: "Source", Reason: fmt.Sprintf("%s: cannot read the folder: %v", dir, err)}
	}
	var out []source
	for _, e := range entries {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg", ".gif":
		default:
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		if len(out) == maxSources {
			return nil, optionErrorf("Source", "%s: more than %d images", dir, maxSources)
		}
		p := filepath.Join(dir, e.Name())
		data, err := readBounded(p, maxBytes)
		if err != nil {
			return nil, &OptionError{Option: "Source", Reason: err.Error()}
		}
		if err := checkImage(data); err != nil {
			return nil, optionErrorf("Source", "%s: %v", p, err)
		}
		out = append(out, source{path: p, data: data})
	}
	if len(out) == 0 {
		return nil, optionErrorf("Source", "%s: no .png, .jpg, .jpeg or .gif files", dir)
	}
	return out, nil
}

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	return bounded.ReadFile(context.Background(), path, max)
}

// checkImage checks data is an image of a size that may be decoded.
func checkImage(data []byte) error {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a PNG, JPEG or GIF image: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxSourcePixels {
		return fmt.Errorf("%d×%d pixels: more than the %d Mpx a source image may have", cfg.Width, cfg.Height, maxSourcePixels>>20)
	}
	return nil
}

// Next returns a turn's images: BatchSize of them, each of a sampled size
// and format from a sampled source.
func (s *Images) Next() ([]Part, error) {
	parts := make([]Part, 0, s.o.BatchSize)
	for range s.o.BatchSize {
		w := sampleSide(s.rng, s.o.WidthMean, s.o.WidthStddev)
		h := sampleSide(s.rng, s.o.HeightMean, s.o.HeightStddev)
		format := s.o.Format
		if format == FormatRandom {
			format = [2]string{FormatPNG, FormatJPEG}[s.rng.IntN(2)]
		}
		k := imageKey{src: s.pick(), w: w, h: h, format: format}
		p, err := s.encoded(k)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// Distinct reports how many images were encoded and their size.
func (s *Images) Distinct() (images int, bytes int64) { return len(s.cache), s.held }

// pick draws the next source: a folder's image by the sampling strategy,
// or a noise variant.
func (s *Images) pick() int {
	n := len(s.sources)
	if n == 0 {
		return s.rng.IntN(s.o.Variants)
	}
	switch s.o.Sampling {
	case SampleShuffle, SampleSequential:
		if s.next == len(s.order) {
			if s.order == nil {
				s.order = make([]int, n)
			}
			for i := range s.order {
				s.order[i] = i
			}
			if s.o.Sampling == SampleShuffle {
				s.rng.Shuffle(n, func(a, b int) { s.order[a], s.order[b] = s.order[b], s.order[a] })
			}
			s.next = 0
		}
		s.next++
		return s.order[s.next-1]
	}
	return s.rng.IntN(n)
}

// sampleSide draws a side as AIPerf does: normal, redrawn while negative,
// rounded up; then clamped to [1, MaxSide].
func sampleSide(rng *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		for v = -1; v < 0; {
			v = mean + rng.NormFloat64()*stddev
		}
	}
	return int(min(max(math.Ceil(v), 1), MaxSide))
}

// encoded returns k's part, encoding it on first use.
func (s *Images) encoded(k imageKey) (Part, error) {
	if p, ok := s.cache[k]; ok {
		return p, nil
	}
	var img *image.RGBA
	if s.sources == nil {
		img = noise(k.w, k.h, s.o.Seed, k.src)
	} else {
		src, err := s.source(k.src)
		if err != nil {
			return Part{}, err
		}
		img = resize(src, k.w, k.h)
	}
	var buf bytes.Buffer
	var err error
	if k.format == FormatJPEG {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: jpeg.DefaultQuality})
	} else {
		// Noise does not compress: storing it gives the same bytes as
		// deflating it (AIPerf's noise PNGs are its raw size too), at a
		// fraction of the time.
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		if s.sources == nil {
			enc.CompressionLevel = png.NoCompression
		}
		err = enc.Encode(&buf, img)
	}
	if err != nil {
		return Part{}, fmt.Errorf("encoding a %d×%d %s image: %w", k.w, k.h, k.format, err)
	}
	p := ImageData(k.format, buf.Bytes(), k.w, k.h)
	if s.held+int64(len(p.JSON)) > s.o.MaxCacheBytes {
		return Part{}, optionErrorf("MaxCacheBytes", "%d MiB reached by %d distinct images: lower the size stddev, the batch size or the number of conversations",
			s.o.MaxCacheBytes>>20, len(s.cache))
	}
	s.held += int64(len(p.JSON))
	s.cache[k] = p
	return p, nil
}

// source decodes a folder's image i once.
func (s *Images) source(i int) (*image.RGBA, error) {
	if img := s.decoded[i]; img != nil {
		return img, nil
	}
	src := s.sources[i]
	m, _, err := image.Decode(bytes.NewReader(src.data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.path, err)
	}
	b := m.Bounds()
	img := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			img.Set(x, y, m.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	s.decoded[i] = img
	return img, nil
}

// noise is a w×h image of seeded uniform noise, opaque: it does not
// compress (AIPerf's default source is noise too), and a seed, size and
// variant always give the same pixels.
func noise(w, h int, seed uint64, variant int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(seed^0x6e6f697365, uint64(w)<<40^uint64(h)<<16^uint64(variant)))
	var bits uint64
	left := 0
	for i := 0; i < len(img.Pix); i += 4 {
		if left < 3 {
			bits, left = rng.Uint64(), 8
		}
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(bits), byte(bits>>8), byte(bits>>16), 0xff
		bits >>= 24
		left -= 3
	}
	return img
}

// resize scales src to w×h bilinearly (AIPerf resizes its source photos
// to each sampled size).
func resize(src *image.RGBA, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	fx := float64(sw) / float64(w)
	fy := float64(sh) / float64(h)
	for y := range h {
		sy := (float64(y)+0.5)*fy - 0.5
		y0 := int(math.Floor(sy))
		ty := sy - float64(y0)
		y0c, y1c := clampInt(y0, sh-1), clampInt(y0+1, sh-1)
		for x := range w {
			sx := (float64(x)+0.5)*fx - 0.5
			x0 := int(math.Floor(sx))
			tx := sx - float64(x0)
			x0c, x1c := clampInt(x0, sw-1), clampInt(x0+1, sw-1)
			p00 := src.Pix[y0c*src.Stride+x0c*4:]
			p01 := src.Pix[y0c*src.Stride+x1c*4:]
			p10 := src.Pix[y1c*src.Stride+x0c*4:]
			p11 := src.Pix[y1c*src.Stride+x1c*4:]
			d := dst.Pix[y*dst.Stride+x*4:]
			for c := range 4 {
				top := float64(p00[c])*(1-tx) + float64(p01[c])*tx
				bot := float64(p10[c])*(1-tx) + float64(p11[c])*tx
				d[c] = byte(math.Round(top*(1-ty) + bot*ty))
			}
		}
	}
	return dst
}

func clampInt(v, hi int) int { return min(max(v, 0), hi) }

// imageFormats lists the formats a data URL or file may have.
var imageFormats = []string{"png", "jpeg", "gif", "webp"}

// knownImageFormat reports whether f is an image format servers read.
func knownImageFormat(f string) bool { return slices.Contains(imageFormats, f) }
