package schedule

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flag, value string
		want        []float64
		wantErr     string
	}{
		{"--concurrency", "1,2,4,8,16,32", []float64{1, 2, 4, 8, 16, 32}, ""},
		{"--request-rate", " 5, 10 ,20 ", []float64{5, 10, 20}, ""},
		{"--request-rate", "2.5", []float64{2.5}, ""},
		{"--request-rate", "5,x,20", nil, `--request-rate: item 2 "x" is not a number`},
		{"--request-rate", "5,10,0", nil, `--request-rate: item 3 "0" must be > 0`},
		{"--concurrency", "-1", nil, `--concurrency: item 1 "-1" must be > 0`},
		{"--concurrency", "1,,2", nil, `--concurrency: item 2 is empty in "1,,2"`},
		{"--concurrency", "1,2,", nil, `--concurrency: item 3 is empty`},
		{"--request-rate", "NaN", nil, `--request-rate: item 1 "NaN" is not a number`},
		{"--request-rate", "1,inf", nil, `--request-rate: item 2 "inf" is not a number`},
		{"--request-rate", "  ", nil, "--request-rate: empty stage list"},
	}
	for _, tt := range tests {
		got, err := ParseStages(tt.flag, tt.value)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseStages(%q) error = %v, want %q", tt.value, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseStages(%q): %v", tt.value, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseStages(%q) (-want +got):\n%s", tt.value, diff)
		}
	}
}

func TestParseIntStages(t *testing.T) {
	t.Parallel()
	got, err := ParseIntStages("--concurrency", "1,2,4")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 2, 4}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for value, want := range map[string]string{
		"1,2.5": "--concurrency: item 2 2.5 must be a whole number",
		"1,b":   `--concurrency: item 2 "b" is not a number`,
		"1e12":  "must be a whole number",
	} {
		if _, err := ParseIntStages("--concurrency", value); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseIntStages(%q) error = %v, want %q", value, err, want)
		}
	}
}

func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"1,2,4,8", " 5, 10 ,20 ", "x", "", ",", "1,,2", "-1", "1e308,1e309", "0x10", "NaN", "1_000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		got, err := ParseStages("--request-rate", value)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--request-rate: ") {
				t.Fatalf("error does not name the flag: %v", err)
			}
			return
		}
		if len(got) != strings.Count(value, ",")+1 {
			t.Fatalf("%q: %d stages for %d items", value, len(got), strings.Count(value, ",")+1)
		}
		for _, v := range got {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("%q: accepted stage %v", value, v)
			}
		}
	})
}
