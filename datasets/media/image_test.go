package media

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodePart decodes an image part's data URL back into an image.
func decodePart(t *testing.T, p Part) (image.Image, string, int) {
	t.Helper()
	var v struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(p.JSON, &v); err != nil {
		t.Fatalf("part JSON %.80s: %v", p.JSON, err)
	}
	if v.Type != "image_url" {
		t.Fatalf("type %q, want image_url", v.Type)
	}
	head, b64, ok := strings.Cut(v.ImageURL.URL, ",")
	if !ok || !strings.HasPrefix(head, "data:image/") || !strings.HasSuffix(head, ";base64") {
		t.Fatalf("url %.60s is not a base64 image data URL", v.ImageURL.URL)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img, format, len(data)
}

func TestImagesSizesFormatsAndCache(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		o      ImageOptions
		format string
	}{
		{"png", ImageOptions{WidthMean: 64, HeightMean: 48, BatchSize: 2}, "png"},
		{"jpeg", ImageOptions{WidthMean: 40, HeightMean: 30, BatchSize: 1, Format: "JPEG"}, "jpeg"},
		{"jpg alias", ImageOptions{WidthMean: 40, HeightMean: 30, BatchSize: 1, Format: "jpg"}, "jpeg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := NewImages(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			for range 20 {
				parts, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if len(parts) != tc.o.BatchSize {
					t.Fatalf("%d parts, want %d", len(parts), tc.o.BatchSize)
				}
				for _, p := range parts {
					img, format, n := decodePart(t, p)
					if format != tc.format || p.Format != tc.format {
						t.Fatalf("format %q (part %q), want %q", format, p.Format, tc.format)
					}
					if b := img.Bounds(); b.Dx() != int(tc.o.WidthMean) || b.Dy() != int(tc.o.HeightMean) || p.Width != b.Dx() || p.Height != b.Dy() {
						t.Fatalf("image %v (part %d×%d), want %g×%g", b, p.Width, p.Height, tc.o.WidthMean, tc.o.HeightMean)
					}
					if p.Bytes != n || p.Kind != Image {
						t.Fatalf("part says %d bytes of kind %v, the data has %d", p.Bytes, p.Kind, n)
					}
				}
			}
			// One size: at most the variants were encoded, shared by all.
			if n, _ := s.Distinct(); n < 1 || n > DefaultVariants {
				t.Fatalf("%d distinct images for one size, want 1..%d", n, DefaultVariants)
			}
		})
	}
}

func TestImagesSharedBytes(t *testing.T) {
	t.Parallel()
	s, err := NewImages(ImageOptions{WidthMean: 32, HeightMean: 32, BatchSize: 1, Variants: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Next()
	b, _ := s.Next()
	if &a[0].JSON[0] != &b[0].JSON[0] {
		t.Fatal("two turns of one size and variant do not share the encoded image")
	}
}

func TestImagesStddevAndSeed(t *testing.T) {
	t.Parallel()
	o := ImageOptions{WidthMean: 50, WidthStddev: 20, HeightMean: 30, HeightStddev: 10, BatchSize: 1, Format: FormatRandom, Seed: 7}
	sizes := func() []string {
		s, err := NewImages(o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 30 {
			p, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if p[0].Width < 1 || p[0].Height < 1 {
				t.Fatalf("size %d×%d", p[0].Width, p[0].Height)
			}
			out = append(out, p[0].Format+string(rune(p[0].Width))+string(rune(p[0].Height))+string(p[0].JSON[len(p[0].JSON)-40:]))
		}
		return out
	}
	a, b := sizes(), sizes()
	distinct := map[string]bool{}
	formats := map[string]bool{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("image %d differs between two runs of one seed", i)
		}
		distinct[a[i]] = true
		formats[a[i][:3]] = true
	}
	if len(distinct) < 10 {
		t.Fatalf("%d distinct images of 30 with a size stddev", len(distinct))
	}
	if len(formats) != 2 {
		t.Fatalf("random format gave %v", formats)
	}
}

// TestNoiseDoesNotCompress: the synthetic images keep their size under
// deflate, so a server's request size is the image's.
func TestNoiseDoesNotCompress(t *testing.T) {
	t.Parallel()
	img := noise(128, 128, 1, 0)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	raw := 128 * 128 * 3
	if buf.Len() < raw*9/10 {
		t.Fatalf("a 128×128 noise PNG is %d bytes, under 90%% of its %d raw bytes", buf.Len(), raw)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(buf.Bytes())
	w.Close()
	if z.Len() < buf.Len()*9/10 {
		t.Fatalf("the PNG deflates from %d to %d bytes", buf.Len(), z.Len())
	}
	if bytes.Equal(noise(8, 8, 1, 0).Pix, noise(8, 8, 1, 1).Pix) {
		t.Fatal("two variants have the same pixels")
	}
}

func writeImage(t *testing.T, path string, w, h int, c color.RGBA) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".jpg") {
		err = jpeg.Encode(f, img, nil)
	} else {
		err = png.Encode(f, img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestImagesFolderSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	colors := []color.RGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}
	for i, c := range colors {
		ext := ".png"
		if i == 1 {
			ext = ".jpg"
		}
		writeImage(t, filepath.Join(dir, string(rune('a'+i))+ext), 20+i, 10, c)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an image"), 0o644)
	for _, tc := range []struct {
		sampling string
		// wantCycle: every source once per cycle of three.
		wantCycle, wantOrder bool
	}{
		{SampleRandom, false, false},
		{SampleShuffle, true, false},
		{SampleSequential, true, true},
	} {
		t.Run(tc.sampling, func(t *testing.T) {
			t.Parallel()
			s, err := NewImages(ImageOptions{WidthMean: 16, HeightMean: 8, BatchSize: 1, Source: dir, Sampling: tc.sampling, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for range 9 {
				p, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				img, _, _ := decodePart(t, p[0])
				if b := img.Bounds(); b.Dx() != 16 || b.Dy() != 8 {
					t.Fatalf("resized to %v, want 16×8", b)
				}
				r, g, b, _ := img.At(8, 4).RGBA()
				switch {
				case r > 0xc000 && g < 0x4000 && b < 0x4000:
					got = append(got, 0)
				case g > 0xc000 && r < 0x4000 && b < 0x4000:
					got = append(got, 1)
				case b > 0xc000 && r < 0x4000 && g < 0x4000:
					got = append(got, 2)
				default:
					t.Fatalf("pixel %x %x %x is no source's colour", r, g, b)
				}
			}
			for c := 0; c < 9 && tc.wantCycle; c += 3 {
				seen := map[int]bool{got[c]: true, got[c+1]: true, got[c+2]: true}
				if len(seen) != 3 {
					t.Fatalf("cycle %v does not take every source once", got[c:c+3])
				}
			}
			if tc.wantOrder && (got[0] != 0 || got[1] != 1 || got[2] != 2) {
				t.Fatalf("sequential order %v", got)
			}
		})
	}
}

func TestImagesOptionErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.png"), []byte("not a png"), 0o644)
	big := t.TempDir()
	writeImage(t, filepath.Join(big, "a.png"), 64, 64, color.RGBA{1, 2, 3, 255})
	empty := t.TempDir()
	for _, tc := range []struct {
		o      ImageOptions
		option string
		reason string
	}{
		{ImageOptions{WidthMean: -1}, "WidthMean", "between 0"},
		{ImageOptions{HeightMean: 1e9}, "HeightMean", "between 0"},
		{ImageOptions{WidthStddev: -2}, "WidthStddev", "≥ 0"},
		{ImageOptions{Format: "bmp"}, "Format", "want png, jpeg or random"},
		{ImageOptions{Sampling: "often"}, "Sampling", "want random-with-replacement"},
		{ImageOptions{Sampling: SampleShuffle}, "Sampling", "noise has no finite pool"},
		{ImageOptions{Source: SourceAssets}, "Source", "does not ship"},
		{ImageOptions{Source: filepath.Join(dir, "missing")}, "Source", "cannot read the folder"},
		{ImageOptions{Source: dir}, "Source", "bad.png: not a PNG"},
		{ImageOptions{Source: empty}, "Source", "no .png"},
		{ImageOptions{Source: big, MaxFileBytes: 100}, "Source", "over the 100 B limit"},
		{ImageOptions{BatchSize: -1}, "BatchSize", "negative"},
	} {
		_, err := NewImages(tc.o)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.option || !strings.Contains(oe.Reason, tc.reason) {
			t.Errorf("%+v: error %v, want %s …%s…", tc.o, err, tc.option, tc.reason)
		}
	}
}

func TestImagesCacheBound(t *testing.T) {
	t.Parallel()
	s, err := NewImages(ImageOptions{WidthMean: 64, WidthStddev: 30, HeightMean: 64, HeightStddev: 30, BatchSize: 4, MaxCacheBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if _, err = s.Next(); err != nil {
			break
		}
	}
	var oe *OptionError
	if !errors.As(err, &oe) || oe.Option != "MaxCacheBytes" {
		t.Fatalf("error %v, want the cache bound", err)
	}
	if _, held := s.Distinct(); held > 64<<10 {
		t.Fatalf("held %d bytes past the bound", held)
	}
}

// BenchmarkImagesNext is a turn's cost once its size is cached: what
// building a dataset of one size costs per turn.
func BenchmarkImagesNext(b *testing.B) {
	s, err := NewImages(ImageOptions{WidthMean: 512, HeightMean: 512, BatchSize: 1})
	if err != nil {
		b.Fatal(err)
	}
	for range 64 { // fill every variant
		s.Next()
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImageEncode is one image's first encoding (a cache miss).
func BenchmarkImageEncode(b *testing.B) {
	for _, format := range []string{FormatPNG, FormatJPEG} {
		b.Run(format, func(b *testing.B) {
			var n int
			for i := 0; b.Loop(); i++ {
				s, _ := NewImages(ImageOptions{WidthMean: 512, HeightMean: 512, BatchSize: 1, Format: format, Variants: 1})
				p, err := s.Next()
				if err != nil {
					b.Fatal(err)
				}
				n = len(p[0].JSON)
			}
			b.ReportMetric(float64(n), "part-bytes")
		})
	}
}
