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

func TestKnee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		points        []StagePoint
		factor        float64
		knee, operate int
	}{
		{
			name: "no knee: latency flat, throughput scaling",
			points: []StagePoint{
				{1, 50, 10}, {2, 52, 20}, {4, 55, 40}, {8, 60, 78},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "knee at 3",
			points: []StagePoint{
				{1, 50, 10}, {2, 55, 20}, {4, 80, 38}, {8, 160, 40}, {16, 400, 41},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "flat throughput but latency under the factor is no knee yet",
			points: []StagePoint{
				{1, 50, 40}, {2, 70, 41}, {4, 99, 41}, {8, 130, 41},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "flat throughput, latency never doubles",
			points: []StagePoint{
				{1, 50, 40}, {2, 60, 40}, {4, 70, 40},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "latency blows up but throughput still gains >10%: keep going",
			points: []StagePoint{
				{1, 50, 10}, {2, 150, 20}, {4, 300, 30}, {8, 600, 32},
			},
			factor: 2, knee: 3, operate: 2,
		},
		{
			name: "exactly 10% gain is not saturated",
			points: []StagePoint{
				{1, 50, 10}, {2, 200, 11},
			},
			factor: 2, knee: -1, operate: -1,
		},
		{
			name: "factor 0 means 2",
			points: []StagePoint{
				{1, 50, 10}, {2, 101, 10.5},
			},
			factor: 0, knee: 1, operate: 0,
		},
		{
			name:   "custom factor 4",
			points: []StagePoint{{1, 50, 10}, {2, 150, 10}, {4, 250, 10}},
			factor: 4, knee: 2, operate: 1,
		},
		{name: "one stage", points: []StagePoint{{1, 50, 10}}, factor: 2, knee: -1, operate: -1},
		{name: "no stages", factor: 2, knee: -1, operate: -1},
	}
	for _, tt := range tests {
		knee, op := Knee(tt.points, tt.factor)
		if knee != tt.knee || op != tt.operate {
			t.Errorf("%s: Knee = (%d, %d), want (%d, %d)", tt.name, knee, op, tt.knee, tt.operate)
		}
	}
}
