package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/datasets"
)

// TestHubDatasetFlags: --hf-dataset and its column, subset, split and
// filter flags, a public dataset's overrides and --hf-weka-dataset fill
// the spec's Dataset.HF, make the workload a dataset's (not synthetic),
// and keep their values in input_config.
func TestHubDatasetFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args   []string
		public string
		want   datasets.HFOptions
		ic     map[string]any
	}{
		{args: []string{"--hf-dataset", "org/qa", "--hf-column", "prompt=question", "system=sys", "--hf-split", "test", "--dataset-filter", "lang=en"},
			want: datasets.HFOptions{Dataset: "org/qa", Split: "test", Columns: []string{"prompt=question", "system=sys"}, Filters: []string{"lang=en"}},
			ic:   map[string]any{"input.hf_dataset": "org/qa", "input.hf_dataset_split": "test"}},
		{args: []string{"--hf-dataset", "org/chat", "--hf-column", "messages=messages,image=img", "--hf-subset", "en"},
			want: datasets.HFOptions{Dataset: "org/chat", Subset: "en", Columns: []string{"messages=messages,image=img"}},
			ic:   map[string]any{"input.hf_dataset_subset": "en"}},
		{args: []string{"--public-dataset", "librispeech", "--hf-subset", "other"}, public: "librispeech",
			want: datasets.HFOptions{Subset: "other"}},
		{args: []string{"--public-dataset", "exgentic", "--dataset-filter", "harness=tool_calling", "source_model=Kimi-K2.5"}, public: "exgentic",
			want: datasets.HFOptions{Filters: []string{"harness=tool_calling", "source_model=Kimi-K2.5"}}},
		{args: []string{"--public-dataset", "weka_hf", "--hf-dataset", "org/traces"}, public: "weka_hf",
			want: datasets.HFOptions{Dataset: "org/traces"}},
		// AIPerf's --hf-weka-dataset picks weka_hf by itself.
		{args: []string{"--hf-weka-dataset", "org/traces"}, public: "weka_hf", want: datasets.HFOptions{Dataset: "org/traces"},
			ic: map[string]any{"input.hf_weka_dataset": "org/traces"}},
		{args: []string{"--hf-weka-dataset", "org/traces", "--public-dataset", "weka_hf"}, public: "weka_hf", want: datasets.HFOptions{Dataset: "org/traces"}},
	} {
		s, err := parseArgs(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		d := &s.Dataset
		if d.Public != tc.public || d.HF.Dataset != tc.want.Dataset || d.HF.Subset != tc.want.Subset || d.HF.Split != tc.want.Split ||
			!slices.Equal(d.HF.Columns, tc.want.Columns) || !slices.Equal(d.HF.Filters, tc.want.Filters) || d.HF.Rows != 0 {
			t.Errorf("%v: public %q, HF %+v; want %q, %+v", tc.args, d.Public, d.HF, tc.public, tc.want)
		}
		if d.Synthetic() {
			t.Errorf("%v: taken for synthetic prompts", tc.args)
		}
		for path, want := range tc.ic {
			if got, _ := cmdline.PathValue(s.InputConfig(), path); got != want {
				t.Errorf("%v: input_config %s = %v, want %v", tc.args, path, got, want)
			}
		}
	}
	if s, err := parseArgs(t); err != nil || !s.Dataset.Synthetic() {
		t.Errorf("no dataset flag: %v, synthetic %v", err, err == nil && s.Dataset.Synthetic())
	}
}

// TestHubDatasetUsageErrors: a name surge refuses, a bad column mapping,
// a flag that would not apply: each a usage error naming the flag and
// saying why, before any download.
func TestHubDatasetUsageErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hf-dataset", "org/x"}, "--hf-column (for --hf-dataset org/x): no prompt=COLUMN or messages=COLUMN"},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt"}, `--hf-column (for --hf-dataset org/x): "prompt": want ROLE=COLUMN`},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "question=q"}, `unknown role "question"`},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt=a", "messages=b"}, "both give the user's text"},
		{[]string{"--hf-dataset", "noslash", "--hf-column", "prompt=a"}, `--hf-dataset "noslash": not a Hugging Face dataset id (ORG/NAME)`},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt=a", "--input-file", "x.jsonl"}, "--hf-dataset org/x and --input-file/--custom-dataset-type: give one dataset"},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt=a", "--dataset-filter", "lang"}, `--dataset-filter "lang": want KEY=VALUE`},
		{[]string{"--hf-column", "prompt=a"}, "--hf-column needs a Hub dataset: --hf-dataset ORG/NAME"},
		{[]string{"--hf-split", "test"}, "--hf-split needs a Hub dataset"},
		{[]string{"--dataset-filter", "a=b"}, "--dataset-filter needs a Hub dataset"},
		{[]string{"--public-dataset", "nosuch"}, `--public-dataset "nosuch": unknown (surge reads `},
		{[]string{"--public-dataset", "mmvu"}, "--public-dataset mmvu: refused: it sends videos"},
		{[]string{"--public-dataset", "sharegpt", "--hf-subset", "x"}, "--hf-subset does not apply to --public-dataset sharegpt"},
		{[]string{"--public-dataset", "sharegpt", "--hf-dataset", "org/x"}, "--hf-dataset does not apply to --public-dataset sharegpt"},
		{[]string{"--public-dataset", "mmstar", "--hf-column", "prompt=q"}, "--hf-column does not apply to --public-dataset mmstar, which maps its own columns (--hf-dataset Lin-Chen/MMStar maps others)"},
		{[]string{"--public-dataset", "mmstar", "--hf-dataset", "org/x"}, "--hf-dataset org/x: --public-dataset mmstar reads Lin-Chen/MMStar; give one of them"},
		{[]string{"--public-dataset", "mmstar", "--input-file", "x.jsonl"}, "--public-dataset mmstar is read from the Hugging Face Hub: drop --input-file"},
		{[]string{"--public-dataset", "mmstar", "--dataset-filter", "a=b"}, "--public-dataset mmstar takes no filters"},
		{[]string{"--public-dataset", "exgentic", "--dataset-filter", "model=x"}, `--dataset-filter "model=x": --public-dataset exgentic takes harness, source_model`},
		{[]string{"--public-dataset", "weka_hf"}, "--public-dataset weka_hf reads the WEKA traces of a Hub dataset: name it with --hf-dataset ORG/NAME (or --hf-weka-dataset)"},
		{[]string{"--hf-weka-dataset", "org/w", "--public-dataset", "mmstar"}, "--hf-weka-dataset org/w reads --public-dataset weka_hf, not mmstar"},
		{[]string{"--hf-weka-dataset", "org/w", "--hf-dataset", "org/v"}, "--hf-weka-dataset org/w and --hf-dataset org/v: give one"},
		// A Hub dataset names its own prompts and media.
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt=a", "--image-width-mean", "64", "--image-height-mean", "64"}, "--image-width-mean: synthetic images and audio go with synthetic prompts"},
		{[]string{"--hf-dataset", "org/x", "--hf-column", "prompt=a", "--isl", "64,128"}, "--isl lists values: it shapes synthetic prompts"},
	} {
		var ue *cmdline.UsageError
		if _, err := parseArgs(t, tc.args...); !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v:\n got  %v\n want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// TestRefusedPublicNames: every name surge refuses is a usage error that
// says why and what to use instead; every name it reads parses.
func TestRefusedPublicNames(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	refused := 0
	for _, d := range datasets.PublicDatasets() {
		args := []string{"--public-dataset", d.Name}
		if d.Name == "weka_hf" {
			args = append(args, "--hf-dataset", "org/traces")
		}
		_, err := parseArgs(t, args...)
		if d.Refused == "" {
			if err != nil {
				t.Errorf("%s: %v", d.Name, err)
			}
			continue
		}
		refused++
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), d.Refused) || !strings.Contains(err.Error(), d.Fix) {
			t.Errorf("%s: %v, want a usage error with the reason and the fix", d.Name, err)
		}
	}
	if refused == 0 {
		t.Error("no refused name to check")
	}
}
