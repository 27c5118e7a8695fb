package loadgen

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/media"
	"github.com/surgebench/surge/examples/mockserver"
	"github.com/surgebench/surge/loadgen/endpoint"
	"github.com/surgebench/surge/loadgen/schedule"
	"github.com/surgebench/surge/metrics"
)

// TestMediaRequests sends two-turn conversations with an image and a
// clip to the mock: every record counts the media its body carried (the
// second turn resends the first's in its history), the mock saw each
// part, and its prefill price shows in TTFT.
func TestMediaRequests(t *testing.T) {
	t.Parallel()
	const perImage = 60 * time.Millisecond
	srv := mockserver.New(mockserver.Config{PrefillPerImage: perImage, DefaultOutputTokens: 4})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	images, err := media.NewImages(media.ImageOptions{WidthMean: 16, HeightMean: 16, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	clips, err := media.NewClips(media.AudioOptions{LengthMean: 0.25, BatchSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	img, _ := images.Next()
	clip, _ := clips.Next()
	ds := &datasets.Dataset{Name: "media"}
	for range 3 {
		ds.Conversations = append(ds.Conversations, datasets.Conversation{ID: "c", Turns: []datasets.Turn{
			{Text: "what is this", InputTokens: 3, MaxTokens: 4, Media: append(append([]media.Part{}, img...), clip...)},
			{Text: "and now", InputTokens: 2, MaxTokens: 4, Media: img},
		}})
	}
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, &endpoint.Endpoint{Kind: endpoint.Chat, Model: "m", Streaming: true}, ds, col)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Run(ctx, []Stage{{Limit: schedule.Constant(3), Count: 6}}); err != nil {
		t.Fatal(err)
	}
	s := col.Close()
	if len(sink.recs) != 6 || s.Run[metrics.ErrorRequestCount] != 0 {
		t.Fatalf("%d records, errors %+v", len(sink.recs), s.Errors)
	}
	one := len(img[0].JSON)
	for i, r := range sink.recs {
		want := struct {
			images int
			secs   float64
			bytes  int
		}{1, 0.25, one + len(clip[0].JSON)}
		if r.TurnIndex == 1 { // the first turn's media again, and its own image
			want.images, want.bytes = 2, 2*one+len(clip[0].JSON)
		}
		if r.Images != want.images || r.AudioSeconds != want.secs || r.MediaBytes != want.bytes {
			t.Errorf("record %d (turn %d): %d images, %g s, %d bytes; want %+v", i, r.TurnIndex, r.Images, r.AudioSeconds, r.MediaBytes, want)
		}
		if r.InputTokens != ds.Conversations[0].Turns[r.TurnIndex].InputTokens {
			t.Errorf("record %d: ISL %d counts more than the text", i, r.InputTokens)
		}
		// The mock never answers before its prefill: a lower bound that
		// holds on any machine.
		if ttft := time.Duration(r.TokenNs[0] - r.SentNs); ttft < time.Duration(r.Images)*perImage {
			t.Errorf("record %d: TTFT %v under %d images' prefill", i, ttft, r.Images)
		}
	}
	if st := srv.Stats(); st.Images != 9 || st.AudioClips != 6 {
		t.Errorf("the mock saw %d images and %d clips, want 9 and 6", st.Images, st.AudioClips)
	}
	if m := s.Metrics[metrics.ImageCount]; m.Max != 2 || m.Min != 1 {
		t.Errorf("image_count %v..%v, want 1..2", m.Min, m.Max)
	}
}

// TestMediaRefusedByCompletions: a type that cannot carry media makes
// each such request an error record, not a crash.
func TestMediaRefusedByCompletions(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(mockserver.New(mockserver.Config{}))
	defer ts.Close()
	ds := &datasets.Dataset{Conversations: []datasets.Conversation{{ID: "c", Turns: []datasets.Turn{
		{Text: "x", MaxTokens: 2, Media: []media.Part{media.ImageURL("https://a/b.png")}}}}}}
	sink := &collectSink{}
	col := metrics.NewCollector(metrics.WithSink(sink))
	g, err := New(ts.URL, &endpoint.Endpoint{Kind: endpoint.Completions, Model: "m"}, ds, col)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Run(context.Background(), []Stage{{Limit: schedule.Constant(1), Count: 2}}); err != nil {
		t.Fatal(err)
	}
	col.Close()
	for _, r := range sink.recs {
		if r.Err == nil || r.Err.Type != ErrRequest {
			t.Fatalf("record error %+v, want a request error", r.Err)
		}
	}
}
