package profile

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
)

// mediaRun is a run on the embedded mock whose every request carries two
// 64×48 PNG images, the mock pricing each at prefill.
func mediaRun(dir string, prefill time.Duration) cmdline.Config {
	c := apptest.RunConfig("", dir)
	c.ImageWidthMean, c.ImageHeightMean, c.ImageBatchSize, c.ImageFormat = 64, 48, 2, "png"
	c.MockPrefillPerImage = prefill
	return c
}

// ttfts are the JSONL's per-request TTFTs in ms.
func ttfts(t *testing.T, dir string) []float64 {
	var out []float64
	for _, l := range apptest.RecordLines(t, dir) {
		m := l["metrics"].(map[string]any)
		out = append(out, m["time_to_first_token"].(map[string]any)["value"].(float64))
	}
	return out
}

// TestMediaEndToEnd runs surge profile on the embedded mock with
// synthetic images: every request carries them (the JSONL and the summary
// count them, inputs.json holds them as sent), and TTFT moves with them by
// the mock's price. The mock never answers early, so the floor holds on
// any machine; the text-only run is only compared by its mean.
func TestMediaEndToEnd(t *testing.T) {
	t.Parallel()
	const prefill = 60 * time.Millisecond
	withImages, textOnly := t.TempDir(), t.TempDir()
	if _, err := runConfig(context.Background(), mediaRun(withImages, prefill), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	c := apptest.RunConfig("", textOnly)
	c.MockPrefillPerImage = prefill
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	floor := float64((20*time.Millisecond + 2*prefill).Milliseconds()) // the mock's TTFT and two images
	var sumImages, sumText float64
	for _, v := range ttfts(t, withImages) {
		if v < floor {
			t.Errorf("TTFT %.1f ms with two images, under the mock's %v ms", v, floor)
		}
		sumImages += v
	}
	text := ttfts(t, textOnly)
	for _, v := range text {
		sumText += v
	}
	if sumImages/12 <= sumText/float64(len(text)) {
		t.Errorf("mean TTFT %.1f ms with images, not above %.1f ms without", sumImages/12, sumText/float64(len(text)))
	}

	for _, l := range apptest.RecordLines(t, withImages) {
		m := l["metrics"].(map[string]any)
		img, _ := m["image_count"].(map[string]any)
		mb, _ := m["media_bytes"].(map[string]any)
		if img == nil || img["value"] != 2.0 || mb == nil || mb["value"].(float64) < 2*64*48*3 {
			t.Fatalf("record metrics image_count %v media_bytes %v, want 2 images of at least their raw bytes", img, mb)
		}
	}
	for _, l := range apptest.RecordLines(t, textOnly) {
		if _, ok := l["metrics"].(map[string]any)["image_count"]; ok {
			t.Fatal("a text-only record has image_count")
		}
	}
	m := apptest.ReadExport(t, withImages)
	if got := apptest.RunAvg(t, m, "image_count"); got != 2 {
		t.Errorf("summary image_count avg %v, want 2", got)
	}
	if _, ok := apptest.ReadExport(t, textOnly)["image_count"]; ok {
		t.Error("a text-only summary has image_count")
	}
	inputs, err := os.ReadFile(filepath.Join(withImages, FileInputs))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(inputs, []byte(`{"type":"image_url","image_url":{"url":"data:image/png;base64,`)); n != 24 {
		t.Errorf("inputs.json holds %d image parts as sent, want 24", n)
	}
}

// TestMediaInputsHashedAtSummary: --export-level summary keeps inputs.json
// small, each image as its digest.
func TestMediaInputsHashedAtSummary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := mediaRun(dir, 0)
	c.ExportLevel = "summary"
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	inputs, err := os.ReadFile(filepath.Join(dir, FileInputs))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(inputs, []byte(";base64,")) || bytes.Count(inputs, []byte(`"url":"data:image/png;sha256,`)) != 24 {
		t.Errorf("inputs.json at summary level does not hold 24 image digests and no base64:\n%.400s", inputs)
	}
}

// TestMediaDatasetFile sends a single_turn file naming an image.
func TestMediaDatasetFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8)))
	img := filepath.Join(dir, "a.png")
	os.WriteFile(img, buf.Bytes(), 0o644)
	file := filepath.Join(dir, "d.jsonl")
	os.WriteFile(file, []byte(`{"text": "what is this?", "image": "`+img+`"}`+"\n"+`{"text": "and this?", "images": ["`+img+`", "`+img+`"]}`+"\n"), 0o644)
	c := apptest.RunConfig("", filepath.Join(dir, "out"))
	c.InputFile, c.CustomDatasetType = file, "single_turn"
	var log bytes.Buffer
	if _, err := runConfig(context.Background(), c, io.Discard, &log); err != nil {
		t.Fatal(err)
	}
	counts := map[float64]int{}
	for _, l := range apptest.RecordLines(t, filepath.Join(dir, "out")) {
		counts[l["metrics"].(map[string]any)["image_count"].(map[string]any)["value"].(float64)]++
	}
	if counts[1] != 6 || counts[2] != 6 {
		t.Errorf("image counts %v, want six requests of 1 and six of 2", counts)
	}
	if !strings.Contains(log.String(), "3 images and 0 audio clips") {
		t.Errorf("the log does not describe the dataset's media:\n%s", log.String())
	}
}

// TestMediaFlagErrors: bad media flags are usage errors naming the flag.
func TestMediaFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		set  func(c *cmdline.Config)
		want string
	}{
		{"completions", func(c *cmdline.Config) { c.EndpointType = "completions" }, "--image-width-mean: endpoint type completions cannot send images or audio"},
		{"with a file", func(c *cmdline.Config) { c.InputFile = "x.jsonl" }, "--image-width-mean: synthetic images and audio go with synthetic prompts"},
		{"format", func(c *cmdline.Config) { c.ImageFormat = "bmp" }, "--image-format \"bmp\": want png, jpeg or random"},
		{"assets", func(c *cmdline.Config) { c.ImageSource = "assets" }, "--image-source assets: surge does not ship"},
		{"mp3", func(c *cmdline.Config) { c.AudioLengthMean, c.AudioBatchSize, c.AudioFormat = 1, 1, "mp3" }, "--audio-format mp3 is not supported"},
		{"rates", func(c *cmdline.Config) {
			c.AudioLengthMean, c.AudioBatchSize, c.AudioSampleRates = 1, 1, []string{"fast"}
		}, `--audio-sample-rates "fast"`},
		{"channels", func(c *cmdline.Config) { c.AudioLengthMean, c.AudioBatchSize, c.AudioChannels = 1, 1, 3 }, "--audio-num-channels must be 1 (mono) or 2"},
		{"prefill", func(c *cmdline.Config) { c.MockPrefillPerImage = -time.Second }, "--mock-prefill-per-image and --mock-prefill-per-audio-second must be ≥ 0"},
	} {
		c := mediaRun(t.TempDir(), 0)
		tc.set(&c)
		_, err := runConfig(context.Background(), c, io.Discard, io.Discard)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a usage error with %q", tc.name, err, tc.want)
		}
	}
}

// TestMediaAloneAndAudio: --isl 0 with audio sends clips alone.
func TestMediaAloneAndAudio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := apptest.RunConfig("", dir)
	c.ISL, c.AudioLengthMean, c.AudioBatchSize, c.AudioChannels, c.AudioFormat = 0, 0.5, 1, 2, "wav"
	c.AudioSampleRates, c.AudioDepths = []string{"8", "16"}, []string{"16,24"}
	if _, err := runConfig(context.Background(), c, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := apptest.RunAvg(t, apptest.ReadExport(t, dir), "audio_duration"); got < 0.49 || got > 0.51 {
		t.Errorf("audio_duration avg %v, want 0.5", got)
	}
}
