package datasets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surgebench/surge/datasets/media"
)

// writePNG writes a w×h PNG and returns its path and bytes.
func writePNG(t *testing.T, dir, name string, w, h int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, buf.Bytes()
}

// TestJSONLMedia loads single_turn and multi_turn rows with AIPerf's
// image/images/audio fields: paths become data URLs, URLs are kept, a
// file named on many rows is read and encoded once.
func TestJSONLMedia(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img, imgBytes := writePNG(t, dir, "a.png", 3, 2)
	wav := filepath.Join(dir, "a.wav")
	clip := []byte("RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x80\x3e\x00\x00")
	clip = append(clip, make([]byte, 16000)...)
	os.WriteFile(wav, clip, 0o644)
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(imgBytes)

	single := strings.Join([]string{
		`{"text": "what is this?", "image": "` + img + `"}`,
		`{"text": "and these?", "images": ["` + img + `", "https://example.com/cat.jpg"]}`,
		`{"images": [{"name": "image_url", "contents": ["` + img + `"]}], "audio": "` + wav + `"}`,
		`{"text": "hear", "audios": ["` + wav + `", "wav,` + base64.StdEncoding.EncodeToString(clip) + `"]}`,
		`{"text": "plain", "image": null}`,
	}, "\n")
	d, rep, err := Load(Options{InputFile: writeFile(t, "m.jsonl", single), CustomDatasetType: TypeSingleTurn})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		text           string
		images, audio  int
		seconds        float64
		firstURLPrefix string
	}
	wants := []want{
		{"what is this?", 1, 0, 0, dataURL},
		{"and these?", 2, 0, 0, dataURL},
		{"", 1, 1, 1, dataURL},
		{"hear", 0, 2, 2, ""},
		{"plain", 0, 0, 0, ""},
	}
	for i, w := range wants {
		tr := d.Conversations[i].Turns[0]
		var st media.Stats
		st.Add(tr.Media)
		if tr.Text != w.text || st.Images != w.images || st.Audio != w.audio || st.Seconds != w.seconds {
			t.Fatalf("row %d: text %q, %+v, want %+v", i+1, tr.Text, st, w)
		}
		if w.firstURLPrefix != "" && !bytes.Contains(tr.Media[0].JSON, []byte(`"url":"`+w.firstURLPrefix+`"`)) {
			t.Fatalf("row %d: part %.80s does not carry the file as a data URL", i+1, tr.Media[0].JSON)
		}
	}
	if got := string(d.Conversations[1].Turns[0].Media[1].JSON); got != `{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}` {
		t.Fatalf("a URL is sent as %s", got)
	}
	// The file named on three rows is one encoding.
	a, b := d.Conversations[0].Turns[0].Media[0].JSON, d.Conversations[2].Turns[0].Media[0].JSON
	if &a[0] != &b[0] {
		t.Fatal("a file named twice was encoded twice")
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "4 images and 3 audio clips (3.0 s) in its turns, 4 distinct encodings held once (42 KiB)") {
		t.Fatalf("report lines %q", rep.Lines)
	}

	multi := `{"session_id": "s", "turns": [{"text": "look", "image": "` + img + `"}, {"text": "again", "images": ["` + img + `", "` + img + `"]}]}`
	d, _, err = Load(Options{InputFile: writeFile(t, "mm.jsonl", multi), CustomDatasetType: TypeMultiTurn})
	if err != nil {
		t.Fatal(err)
	}
	if n0, n1 := len(d.Conversations[0].Turns[0].Media), len(d.Conversations[0].Turns[1].Media); n0 != 1 || n1 != 2 {
		t.Fatalf("multi_turn media %d and %d, want 1 and 2", n0, n1)
	}
	pool := `{"text": "p", "image": "` + img + `"}`
	d, _, err = Load(Options{InputFile: writeFile(t, "p.jsonl", pool), CustomDatasetType: TypeRandomPool, Synthetic: SyntheticOptions{Count: 3}})
	if err != nil || len(d.Conversations[2].Turns[0].Media) != 1 {
		t.Fatalf("random_pool media: %v", err)
	}
}

// TestParseLineMediaInline: parsing one line alone reads no files.
func TestParseLineMediaInline(t *testing.T) {
	t.Parallel()
	if _, err := ParseSingleTurnLine("f.jsonl", 2, []byte(`{"text": "a", "image": "/etc/hostname"}`)); err == nil || !strings.Contains(err.Error(), "read only when the whole dataset is loaded") {
		t.Fatalf("error %v", err)
	}
	tr, err := ParseSingleTurnLine("f.jsonl", 2, []byte(`{"image": "https://x/y.png"}`))
	if err != nil || len(tr.Media) != 1 || tr.Text != "" {
		t.Fatalf("an image-only line: %+v, %v", tr, err)
	}
}

func TestSyntheticMedia(t *testing.T) {
	t.Parallel()
	o := Options{Seed: 5, Synthetic: SyntheticOptions{Count: 6, ISL: 20, OSL: 5,
		Images: media.ImageOptions{WidthMean: 32, HeightMean: 24, BatchSize: 2, Format: "jpeg"},
		Audio:  media.AudioOptions{LengthMean: 0.5, BatchSize: 1}}}
	d, rep, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Conversations {
		tr := c.Turns[0]
		var st media.Stats
		st.Add(tr.Media)
		if st.Images != 2 || st.Audio != 1 || st.Seconds != 0.5 || tr.InputTokens == 0 {
			t.Fatalf("turn media %+v, ISL %d", st, tr.InputTokens)
		}
		if tr.Media[0].Kind != media.Image || tr.Media[2].Kind != media.Audio || tr.Media[0].Width != 32 {
			t.Fatalf("parts out of order: %v %v %v", tr.Media[0].Kind, tr.Media[1].Kind, tr.Media[2].Kind)
		}
	}
	if !strings.Contains(strings.Join(rep.Lines, "\n"), "12 images and 6 audio clips (3.0 s)") {
		t.Fatalf("report %q", rep.Lines)
	}
	// Media do not change a seed's prompts.
	plain, _, err := Load(Options{Seed: 5, Synthetic: SyntheticOptions{Count: 6, ISL: 20, OSL: 5}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain.Conversations {
		if a, b := plain.Conversations[i].Turns[0].Content(), d.Conversations[i].Turns[0].Content(); a != b {
			t.Fatalf("conversation %d's prompt changed with media", i)
		}
	}
	// Media alone: no text.
	only, _, err := Load(Options{Synthetic: SyntheticOptions{Count: 2, Images: media.ImageOptions{WidthMean: 8, HeightMean: 8, BatchSize: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if tr := only.Conversations[0].Turns[0]; tr.Content() != "" || len(tr.Media) != 1 || tr.InputTokens != 0 {
		t.Fatalf("an image-only turn: %q, %d parts", tr.Content(), len(tr.Media))
	}
	for _, tc := range []struct {
		o    SyntheticOptions
		want string
	}{
		{SyntheticOptions{Count: 1, ISL: 5, Audio: media.AudioOptions{LengthMean: 1, BatchSize: 1, Format: "mp3"}}, "Synthetic.Audio.Format"},
		{SyntheticOptions{Count: 1, ISL: 5, Images: media.ImageOptions{WidthMean: 8, HeightMean: 8, BatchSize: 1, Format: "tiff"}}, "Synthetic.Images.Format"},
		{SyntheticOptions{Count: 50, ISL: 5, Images: media.ImageOptions{WidthMean: 64, WidthStddev: 40, HeightMean: 64, HeightStddev: 40, BatchSize: 1, MaxCacheBytes: 32 << 10}}, "Synthetic.Images.MaxCacheBytes"},
		{SyntheticOptions{Count: 1}, "Synthetic.ISL"},
	} {
		_, _, err := Load(Options{Synthetic: tc.o})
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != tc.want {
			t.Errorf("%+v: error %v, want option %s", tc.o, err, tc.want)
		}
	}
}

// FuzzMediaLine parses single-turn lines whose media fields take any
// shape: a file:line error or a turn whose parts are whole, never a panic.
func FuzzMediaLine(f *testing.F) {
	for _, s := range []string{
		`{"text": "a", "image": "https://x/y.png"}`,
		`{"images": ["data:image/png;base64,aGk=", "https://a"], "audio": "wav,UklGRg=="}`,
		`{"images": [{"name": "n", "contents": ["https://a"]}], "audios": null}`,
		`{"image": 1}`, `{"image": "a", "images": ["b"]}`, `{"audios": [{"contents": ["mp3,AAAA"]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ParseSingleTurnLine("f.jsonl", 7, b)
		checkInputError(t, err, "f.jsonl:7: ")
		if err != nil {
			return
		}
		for _, p := range tr.Media {
			if len(p.JSON) == 0 || p.Kind != media.Image && p.Kind != media.Audio {
				t.Fatalf("accepted a part %+v", p)
			}
		}
	})
}
