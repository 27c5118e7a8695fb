package profile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/internal/apptest"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/hf/hftest"
)

// hubEnv points the Hugging Face client at h, from an empty cache, with no
// token.
func hubEnv(t *testing.T, h *hftest.Hub) {
	t.Setenv("HF_ENDPOINT", h.URL)
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_TOKEN", "")
	t.Setenv("HUGGING_FACE_HUB_TOKEN", "")
}

// hubRun runs `surge profile` with args (and a quick run's settings) on
// the embedded mock: the log, and the bodies sent.
func hubRun(t *testing.T, args ...string) (log string, bodies []string) {
	t.Helper()
	dir := t.TempDir()
	args = append([]string{"--model", "mock", "--tokenizer", "builtin", "--streaming", "--ui", "none", "--artifact-dir", dir,
		"--no-gpu-telemetry", "--no-server-metrics", "--extra-inputs", "max_completion_tokens:4"}, args...)
	c, err := cmdline.ParseProfile(args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	var buf bytes.Buffer
	res, err := runConfig(context.Background(), c, io.Discard, &buf)
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, buf.String())
	}
	if res.Summary.Run["error_request_count"] != 0 {
		t.Errorf("%v: %v failed requests", args, res.Summary.Run["error_request_count"])
	}
	return buf.String(), inputsPayloads(t, dir)
}

type hubChatMsg struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type hubChatRow struct {
	Messages []hubChatMsg `parquet:"messages,list"`
	Image    struct {
		Bytes []byte `parquet:"bytes"`
		Path  string `parquet:"path"`
	} `parquet:"img"`
}

func hubPNG(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHubDatasetEndToEnd: --hf-dataset with --hf-column and
// --dataset-filter sends the rows the filter keeps, in order, reading
// only the files the run's count needs; a chat column with images sends
// its user turns and the image; a public name and --hf-weka-dataset read
// their repositories.
func TestHubDatasetEndToEnd(t *testing.T) {
	h := hftest.New(t)
	for f := range 3 {
		var b strings.Builder
		for r := range 10 {
			lang := "en"
			if r%2 == 1 {
				lang = "fr"
			}
			fmt.Fprintf(&b, `{"question": "question %d-%d", "lang": %q}`+"\n", f, r, lang)
		}
		h.Add("org/qa", "main", fmt.Sprintf("data/train-%05d-of-00003.jsonl", f), []byte(b.String()))
	}
	var row hubChatRow
	row.Messages = []hubChatMsg{{"user", "What is in the picture?"}, {"assistant", "A square."}, {"user", "What colour?"}, {"assistant", "Black."}}
	row.Image.Bytes = hubPNG(t)
	h.Add("org/chat", "main", "data/test-0.parquet", hftest.Parquet(t, []hubChatRow{row}, 0))
	h.Add("openai/gsm8k", "main", "main/test-00000-of-00001.jsonl", []byte(`{"question": "Tom has 3 apples and buys 2. How many?", "answer": "5"}`+"\n"))
	trace, _ := json.Marshal(map[string]any{"id": "w1", "block_size": 16, "hash_id_scope": "local", "models": []string{"m"}, "requests": []any{
		map[string]any{"t": 0.0, "type": "n", "model": "m", "in": 32, "out": 2, "hash_ids": []int{1, 2}},
		map[string]any{"t": 0.05, "type": "n", "model": "m", "in": 48, "out": 2, "hash_ids": []int{1, 2, 3}}}})
	h.Add("org/traces", "main", "traces.jsonl", append(trace, '\n'))
	hubEnv(t, h)

	// Six requests, one at a time: the first six English rows, which the
	// first two files hold; the third is never fetched.
	log, bodies := hubRun(t, "--hf-dataset", "org/qa", "--hf-column", "prompt=question", "--dataset-filter", "lang=en", "--request-count", "6", "--concurrency", "1")
	if len(bodies) != 6 {
		t.Fatalf("%d bodies, want 6", len(bodies))
	}
	for _, q := range []string{"question 0-0", "question 0-8", "question 1-0"} {
		if !strings.Contains(strings.Join(bodies, "\n"), q) {
			t.Errorf("no body sends %q", q)
		}
	}
	if strings.Contains(strings.Join(bodies, "\n"), "-1\"") || strings.Contains(strings.Join(bodies, "\n"), "question 1-2\"") {
		t.Errorf("a filtered or unneeded row was sent: %q", bodies)
	}
	for _, p := range h.Paths {
		if strings.Contains(p, "00002-of") {
			t.Errorf("the third file was fetched: %q", h.Paths)
		}
	}
	if !strings.Contains(log, "dataset: org/qa, train: ") || !strings.Contains(log, "kept 6 of 11 rows (filtered out 5)") || !strings.Contains(log, "downloading the Hub dataset") {
		t.Errorf("log:\n%s", log)
	}

	// A chat and its image: each user message a turn, the image with the
	// first.
	_, bodies = hubRun(t, "--hf-dataset", "org/chat", "--hf-split", "test", "--hf-column", "messages=messages", "image=img", "--request-count", "2", "--concurrency", "1")
	if len(bodies) != 2 || !strings.Contains(bodies[0]+bodies[1], "data:image/png;base64,") || !strings.Contains(bodies[0]+bodies[1], "What colour?") {
		t.Errorf("chat bodies %q", bodies)
	}

	// A public name: its repository, subset, split and column.
	_, bodies = hubRun(t, "--public-dataset", "spec_al_gsm8k", "--request-count", "1")
	if len(bodies) != 1 || !strings.Contains(bodies[0], "Tom has 3 apples") {
		t.Errorf("gsm8k bodies %q", bodies)
	}

	// AIPerf's --hf-weka-dataset: weka_hf of that repository, both calls
	// of the trace sent.
	log, bodies = hubRun(t, "--hf-weka-dataset", "org/traces", "--conversation-num", "1")
	if len(bodies) != 2 || !strings.Contains(log, "weka_hf") {
		t.Errorf("weka: %d bodies, log:\n%s", len(bodies), log)
	}
}

// TestHubRows: the rows a Hub dataset reads follow the run's count: its
// requests (every stage's and the warmup's), its conversations, at most
// datasets.MaxHubRows (a longer run sends them again, as it does any
// dataset's), or the library's default when a duration alone bounds it.
func TestHubRows(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--request-count", "50"}, 50},
		{[]string{"--request-count", "50", "--concurrency", "1,4"}, 100},
		{[]string{"--conversation-num", "7"}, 7},
		{[]string{"--request-count", "20", "--warmup-request-count", "5"}, 25},
		{[]string{"--benchmark-duration", "30"}, 0},
		{[]string{"--benchmark-duration", "30", "--request-count", "9"}, 9},
		{nil, defaultRequestCount},
		{[]string{"--request-count", "2000000"}, datasets.MaxHubRows},
	} {
		c, err := cmdline.ParseProfile(append([]string{"--hf-dataset", "org/x", "--hf-column", "prompt=p", "--model", "mock"}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if got := hubRows(specFor(t, c)); got != tc.want {
			t.Errorf("%v: %d rows, want %d", tc.args, got, tc.want)
		}
	}
}

// TestHubDatasetBadInputExits2: a missing column, a private dataset
// without a token, a file offline and not cached, a file type surge does
// not read: through the whole command line, each exits 2 with one line
// naming the dataset, the file and the fix, and the target never sees a
// request.
func TestHubDatasetBadInputExits2(t *testing.T) {
	bin := apptest.SurgeBinary(t)
	h := hftest.New(t)
	h.Add("org/cols", "main", "train.jsonl", []byte(`{"question": "q", "answer": "a"}`+"\n"))
	h.Add("org/private", "main", "train.jsonl", []byte(`{"prompt": "p"}`+"\n"))
	h.Gate("org/private", "hf_right_token")
	h.Add("org/arrow", "main", "data/train.arrow", []byte("x"))
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer target.Close()
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		want    []string
		secret  string
		offline bool
	}{
		{name: "missing column", args: []string{"--hf-dataset", "org/cols", "--hf-column", "prompt=prompt"},
			want: []string{"hf dataset org/cols, train.jsonl", `no column "prompt"`, "its columns are answer, question", "--hf-column ROLE=COLUMN"}},
		{name: "private without a token", args: []string{"--hf-dataset", "org/private", "--hf-column", "prompt=prompt"},
			want: []string{"hf dataset org/private", "org/private@main", "HTTP 401", "set HF_TOKEN"}},
		{name: "private with another token", args: []string{"--hf-dataset", "org/private", "--hf-column", "prompt=prompt"}, env: []string{"HF_TOKEN=hf_wrong_secret"},
			want: []string{"hf dataset org/private", "HTTP 403", "HF_TOKEN"}, secret: "hf_wrong_secret"},
		{name: "offline and not cached", args: []string{"--hf-dataset", "org/cols", "--hf-column", "prompt=question"}, offline: true,
			want: []string{"hf dataset org/cols", "HF_HUB_OFFLINE is set", "run once with the network"}},
		{name: "a file type surge does not read", args: []string{"--hf-dataset", "org/arrow", "--hf-column", "prompt=p"},
			want: []string{"hf dataset org/arrow", "data/train.arrow", "Arrow files", "which surge does not read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"profile", "--url", target.URL, "--model", "m", "--tokenizer", "builtin", "--skip-preflight", "--ui", "none",
				"--request-count", "2", "--artifact-dir", t.TempDir(), "--no-gpu-telemetry", "--no-server-metrics"}, tc.args...)
			cmd := exec.Command(bin, args...)
			offline := ""
			if tc.offline {
				offline = "1"
			}
			cmd.Env = append(os.Environ(), "HF_ENDPOINT="+h.URL, "HF_HUB_CACHE="+t.TempDir(), "HF_HOME="+t.TempDir(), "HF_HUB_OFFLINE="+offline,
				"HF_TOKEN=", "HUGGING_FACE_HUB_TOKEN=", "OPENAI_API_KEY=")
			cmd.Env = append(cmd.Env, tc.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			if got := cmd.ProcessState.ExitCode(); got != cmdline.ExitUsage {
				t.Fatalf("exit %d, want %d:\n%s", got, cmdline.ExitUsage, stderr.String())
			}
			var line string
			for l := range strings.SplitSeq(stderr.String(), "\n") {
				if strings.HasPrefix(l, "surge: ") {
					if line != "" {
						t.Errorf("two error lines:\n%s", stderr.String())
					}
					line = l
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("the error line lacks %q:\n%s", w, stderr.String())
				}
			}
			if tc.secret != "" && strings.Contains(stderr.String(), tc.secret) {
				t.Errorf("the token is in the output:\n%s", stderr.String())
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the target saw %d requests", n)
	}
}

// TestDownloadLineSaysWhat: the console's download line names what it
// downloads.
func TestDownloadLineSaysWhat(t *testing.T) {
	var buf bytes.Buffer
	d := newDownloadLine(&buf, "the Hub dataset")
	d.update(1<<20, 4<<20)
	d.end()
	if got := buf.String(); got != "downloading the Hub dataset: 1.0 of 4.0 MiB (25%)\n" {
		t.Errorf("not a terminal: %q", got)
	}
	buf.Reset()
	d = newDownloadLine(&buf, "the Hub dataset")
	d.tty = true
	d.update(1<<20, 4<<20)
	d.end()
	if got := buf.String(); got != "\rdownloading the Hub dataset: 1.0 of 4.0 MiB (25%)\rdownloading the Hub dataset: 1.0 of 4.0 MiB (25%)\n" {
		t.Errorf("a terminal: %q", got)
	}
}
