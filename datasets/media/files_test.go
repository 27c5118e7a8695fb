package media

import (
	"encoding/base64"
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFilesImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png := filepath.Join(dir, "a.png")
	writeImage(t, png, 6, 4, color.RGBA{9, 9, 9, 255})
	data, _ := os.ReadFile(png)
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("hello"), 0o644)
	f := NewFiles(0)
	for _, tc := range []struct {
		ref, format, url string
		bytes, w, h      int
	}{
		{"https://example.com/cat.png", "url", "https://example.com/cat.png", 0, 0, 0},
		{"HTTP://example.com/x", "url", "HTTP://example.com/x", 0, 0, 0},
		{"data:image/png;base64," + base64.StdEncoding.EncodeToString(data), "png", "data:image/png;base64," + base64.StdEncoding.EncodeToString(data), len(data), 0, 0},
		{png, "png", "data:image/png;base64," + base64.StdEncoding.EncodeToString(data), len(data), 6, 4},
	} {
		p, err := f.Image(tc.ref)
		if err != nil {
			t.Fatalf("%.40s: %v", tc.ref, err)
		}
		var v struct {
			ImageURL struct{ URL string } `json:"image_url"`
		}
		json.Unmarshal(p.JSON, &v)
		if v.ImageURL.URL != tc.url || p.Format != tc.format || p.Bytes != tc.bytes || p.Width != tc.w || p.Height != tc.h {
			t.Fatalf("%.40s: %+v (url %.40s)", tc.ref, p, v.ImageURL.URL)
		}
	}
	f.Image(png)
	if f.Read() != 1 {
		t.Fatalf("%d files read for one path named twice, want 1", f.Read())
	}
	for ref, want := range map[string]string{
		"":                             "empty",
		filepath.Join(dir, "x.txt"):    "not a PNG, JPEG, GIF or WebP",
		filepath.Join(dir, "none.png"): "no such file",
		"data:image/png;base64,@@@":    "bad base64",
		"data:image/png,abc":           "not base64",
		"data:text/plain;base64,aGk=":  "not an image",
		"data:image/png;base64":        `no ","`,
	} {
		if _, err := f.Image(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want …%s…", ref, err, want)
		}
	}
	small := NewFiles(10)
	if _, err := small.Image(png); err == nil || !strings.Contains(err.Error(), "over the 10 B limit") {
		t.Fatalf("a file past the bound: %v", err)
	}
	if _, err := small.Image("data:image/png;base64," + base64.StdEncoding.EncodeToString(data)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a data URL past the bound: %v", err)
	}
}

func TestFilesAudio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clip := wav(clipKey{samples: 4000, rate: 16000, depth: 16, channels: 1}, 2)
	path := filepath.Join(dir, "a.wav")
	os.WriteFile(path, clip, 0o644)
	mp3 := filepath.Join(dir, "b.mp3")
	os.WriteFile(mp3, []byte("ID3\x03\x00rest"), 0o644)
	odd := filepath.Join(dir, "c.mp3")
	os.WriteFile(odd, []byte("no magic"), 0o644)
	b64 := base64.StdEncoding.EncodeToString(clip)
	f := NewFiles(0)
	for _, tc := range []struct {
		ref, format string
		secs        float64
	}{
		{path, "wav", 0.25},
		{"wav," + b64, "wav", 0.25},
		{"data:audio/wav;base64," + b64, "wav", 0.25},
		{mp3, "mp3", 0},
		{odd, "mp3", 0},
	} {
		p, err := f.Audio(tc.ref)
		if err != nil {
			t.Fatalf("%.30s: %v", tc.ref, err)
		}
		format, data := decodeClip(t, p)
		if format != tc.format || p.Seconds != tc.secs || p.Bytes != len(data) {
			t.Fatalf("%.30s: format %q, %g s, %d bytes", tc.ref, format, p.Seconds, p.Bytes)
		}
	}
	for ref, want := range map[string]string{
		"https://example.com/a.wav":    "audio URL cannot be sent",
		"wav,!!!":                      "bad base64",
		"data:audio/ogg;base64,aGk=":   "not wav or mp3",
		filepath.Join(dir, "none.wav"): "no such file",
		"":                             "empty",
	} {
		if _, err := f.Audio(ref); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want …%s…", ref, err, want)
		}
	}
	txt := filepath.Join(dir, "n.txt")
	os.WriteFile(txt, []byte("hello"), 0o644)
	if _, err := f.Audio(txt); err == nil || !strings.Contains(err.Error(), "not a WAV or MP3") {
		t.Fatalf("a text file as audio: %v", err)
	}
}

func TestStatsAdd(t *testing.T) {
	t.Parallel()
	img := ImageURL("https://x/y.png")
	clip := AudioData("wav", wav(clipKey{samples: 800, rate: 8000, depth: 8, channels: 1}, 1), 0.1)
	var s Stats
	s.Add([]Part{img, clip, clip})
	if s.Images != 1 || s.Audio != 2 || s.Seconds != 0.2 || s.Bytes != len(img.JSON)+2*len(clip.JSON) {
		t.Fatalf("%+v", s)
	}
	if Image.String() != "image" || Audio.String() != "audio" || Kind(0).String() != "media" {
		t.Fatal("kind names")
	}
}

// FuzzFiles feeds dataset references (data URLs, AIPerf's "format,base64")
// to the resolver: an error or a part whose JSON is valid, never a panic.
func FuzzFiles(f *testing.F) {
	for _, s := range []string{"data:image/png;base64,aGk=", "wav,UklGRg==", "data:audio/wav;base64,UklGRiQAAABXQVZF", "data:,", "mp3,", "https://a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		if !strings.HasPrefix(ref, "data:") && !strings.HasPrefix(ref, "wav,") && !strings.HasPrefix(ref, "mp3,") && !strings.HasPrefix(ref, "http") {
			return // local paths: no file system in a fuzz test
		}
		r := NewFiles(1 << 16)
		for _, get := range []func(string) (Part, error){r.Image, r.Audio} {
			p, err := get(ref)
			if err == nil && !json.Valid(p.JSON) {
				t.Fatalf("%q gave invalid JSON %s", ref, p.JSON)
			}
		}
		wavSeconds([]byte(ref))
	})
}
