package profile

import (
	"fmt"

	"github.com/surgebench/surge/app/spec"
)

// mockSpecLine describes the embedded mock's draft model for the line
// that announces it ("" without one).
func mockSpecLine(t *spec.Target) string {
	if t.MockSpecTokens == 0 {
		return ""
	}
	return fmt.Sprintf(", a draft model of %d tokens a step accepting each with probability %g", t.MockSpecTokens, t.MockSpecAcceptance)
}
