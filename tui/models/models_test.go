package models

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/surgebench/surge/metrics"
)

func TestUpdateView(t *testing.T) {
	var m Model
	if m.Len() != 0 || m.View(80, 4) != "" {
		t.Fatal("a run of one model shows the panel")
	}
	m, _ = m.Update(Msg{Models: []metrics.ModelLive{
		{Model: "meta-llama/Llama-3.1-8B-Instruct", Finished: 120, Failed: 2, TTFT: metrics.Quantiles{Count: 118, P99: 43.2}, OutputTokenThroughput: 534},
		{Model: "lora-sql", Finished: 40, TTFT: metrics.Quantiles{Count: 40, P99: 40.1}, OutputTokenThroughput: 248},
	}})
	if m.Len() != 2 || m.Title() != "models" {
		t.Fatalf("len %d title %q", m.Len(), m.Title())
	}
	for _, w := range []int{30, 60, 120} {
		lines := strings.Split(m.View(w, 2), "\n")
		if len(lines) != 2 {
			t.Errorf("width %d: %d lines", w, len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) != w {
				t.Errorf("width %d: line %q is %d wide", w, l, ansi.StringWidth(l))
			}
		}
	}
	v := ansi.Strip(m.View(120, 2))
	if !strings.Contains(v, "120 req") || !strings.Contains(v, "2 err") || !strings.Contains(v, "534 tok/s") || !strings.Contains(v, "TTFT p99 43.2") || !strings.Contains(v, "lora-sql") {
		t.Errorf("view %q", v)
	}
}
