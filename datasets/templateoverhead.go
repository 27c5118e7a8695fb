package datasets

// TemplateOverhead is what a chat template adds around a conversation's
// text, in tokens (chattemplate's Overheads probe): Fixed once a request
// (BOS, the generation prompt), Wrap around each message (role header,
// end of turn).
type TemplateOverhead struct {
	Fixed, Wrap int
}

// turnISL is the bare length to draw for turn j of a conversation whose
// templated turn should be isl tokens, as AIPerf's composer compensates
// under --apply-chat-template: the first turn pays Fixed and Wrap, a later
// turn Wrap; never below 1.
func (o TemplateOverhead) turnISL(isl, j int) int {
	if isl <= 0 || o == (TemplateOverhead{}) {
		return isl
	}
	cut := o.Wrap
	if j == 0 {
		cut += o.Fixed
	}
	return max(1, isl-cut)
}
