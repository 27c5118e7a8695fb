package spec

import (
	"slices"
	"strings"
	"testing"
)

func TestModelWeightsAndLoRA(t *testing.T) {
	t.Parallel()
	parse := func(args ...string) (*Spec, error) { return parseArgs(t, args...) }
	s, err := parse("-m", "base,ad1", "--model-selection-strategy", "weighted", "--model-weights", "0.6,0.4", "--lora", "ad1=base")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Target.Weights, []float64{0.6, 0.4}) || s.Target.LoRA["ad1"] != "base" {
		t.Errorf("target %+v", s.Target)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"-m", "a,b", "--model-selection-strategy", "weighted"}, "needs --model-weights"},
		{[]string{"-m", "a,b", "--model-weights", "0.5,0.5"}, "give --model-selection-strategy weighted"},
		{[]string{"-m", "a,b", "--model-selection-strategy", "weighted", "--model-weights", "0.5"}, "1 weights for 2 models"},
		{[]string{"-m", "a,b", "--model-selection-strategy", "weighted", "--model-weights", "0.5,0.2"}, "sum to 0.7"},
		{[]string{"-m", "a,b", "--lora", "c=a"}, "not one of the --model names"},
		{[]string{"-m", "a,b", "--lora", "a"}, "want ADAPTER=BASE"},
	} {
		if _, err := parse(bad.args...); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: %v, want %q", bad.args, err, bad.says)
		}
	}
}
