package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// SynthesisOptions reshape a trace's rows before their prompts are built,
// as AIPerf's trace synthesizer does: its clock, its prefix sharing, its
// prompt and output lengths. The zero value changes nothing.
type SynthesisOptions struct {
	// Speedup divides every row's timestamp (not its think time, as
	// AIPerf's synthesizer leaves delays); 0 means 1.
	Speedup float64
	// PrefixLen multiplies a row's shared prefix blocks (the leading hash
	// ids some other row also names); PromptLen its unique rest's length;
	// OutputLen its output length. 0 means 1.
	PrefixLen, PromptLen, OutputLen float64
	// PrefixRoot spreads the rows over this many independent prefix trees
	// (each row's ids moved into one of them at random, seeded); 0 or 1:
	// one tree.
	PrefixRoot int
	// MaxISL leaves out the rows longer than this many input tokens (and
	// caps the reshaped lengths at it); MaxOSL caps every output length
	// (a WEKA subagent's calls excepted, as AIPerf keeps their decode
	// load). 0: no bound.
	MaxISL, MaxOSL int
}

// factor is a multiplier's value (0: 1).
func factor(f float64) float64 {
	if f == 0 {
		return 1
	}
	return f
}

// reshapes reports whether the options move hash ids (prefix or prompt
// lengths, prefix trees).
func (o *SynthesisOptions) reshapes() bool {
	return factor(o.PrefixLen) != 1 || factor(o.PromptLen) != 1 || o.PrefixRoot > 1
}

// any reports whether any option is set.
func (o *SynthesisOptions) any() bool {
	return o.reshapes() || factor(o.Speedup) != 1 || factor(o.OutputLen) != 1 || o.MaxISL > 0 || o.MaxOSL > 0
}

// Check refuses options out of range, or for a dataset type they cannot
// reshape: synthesis needs a trace, and prefix reshaping needs hash ids
// whose prompts surge builds (a Baseten row sends its recorded prompt, so
// AIPerf refuses it there too).
func (o *SynthesisOptions) Check(kind string) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"Synthesis.Speedup", o.Speedup}, {"Synthesis.PrefixLen", o.PrefixLen}, {"Synthesis.PromptLen", o.PromptLen}, {"Synthesis.OutputLen", o.OutputLen}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return optionErrorf(f.name, "must be > 0, got %g", f.v)
		}
	}
	switch {
	case o.PrefixRoot < 0:
		return optionErrorf("Synthesis.PrefixRoot", "must be ≥ 1, got %d", o.PrefixRoot)
	case o.MaxISL < 0:
		return optionErrorf("Synthesis.MaxISL", "must be ≥ 1, got %d", o.MaxISL)
	case o.MaxOSL < 0:
		return optionErrorf("Synthesis.MaxOSL", "must be ≥ 1, got %d", o.MaxOSL)
	case !o.any():
		return nil
	case !IsTrace(kind):
		if kind == "" {
			kind = TypeSynthetic
		}
		return optionErrorf(o.firstSet(), "reshapes a trace (mooncake_trace, bailian_trace, weka, …), not a %s dataset", kind)
	case kind == TypeBaseten && factor(o.Speedup) != 1:
		return optionErrorf("Synthesis.Speedup", "does not apply to a Baseten replay (it sends the recorded prompts): compress its clock with the replay speedup")
	case (kind == TypeBaseten || kind == TypeAzure || kind == TypeBurstGPT) && o.reshapes():
		what := "its rows carry no hash ids to reshape"
		if kind == TypeBaseten {
			what = "it sends the recorded prompts, which reshaped hash ids would no longer describe"
		}
		return optionErrorf(o.firstReshape(), "does not apply to a %s trace: %s", kind, what)
	}
	return nil
}

// firstSet names the first option set, for an error.
func (o *SynthesisOptions) firstSet() string {
	switch {
	case factor(o.Speedup) != 1:
		return "Synthesis.Speedup"
	case factor(o.OutputLen) != 1:
		return "Synthesis.OutputLen"
	case o.MaxISL > 0:
		return "Synthesis.MaxISL"
	case o.MaxOSL > 0:
		return "Synthesis.MaxOSL"
	}
	return o.firstReshape()
}

// firstReshape names the first reshaping option set.
func (o *SynthesisOptions) firstReshape() string {
	switch {
	case factor(o.PrefixLen) != 1:
		return "Synthesis.PrefixLen"
	case factor(o.PromptLen) != 1:
		return "Synthesis.PromptLen"
	}
	return "Synthesis.PrefixRoot"
}

// synthStats counts what synthesis changed, for the load report.
type synthStats struct {
	overISL, cappedOSL int
}

// lines are the report's lines.
func (s *synthStats) lines(o *SynthesisOptions) []string {
	var out []string
	if o.MaxISL > 0 {
		out = append(out, fmt.Sprintf("synthesis: %d rows over %d input tokens left out", s.overISL, o.MaxISL))
	}
	var did []string
	if f := factor(o.Speedup); f != 1 {
		did = append(did, fmt.Sprintf("timestamps divided by %g", f))
	}
	if f := factor(o.PrefixLen); f != 1 {
		did = append(did, fmt.Sprintf("shared prefixes ×%g", f))
	}
	if f := factor(o.PromptLen); f != 1 {
		did = append(did, fmt.Sprintf("unique prompts ×%g", f))
	}
	if o.PrefixRoot > 1 {
		did = append(did, fmt.Sprintf("%d prefix trees", o.PrefixRoot))
	}
	if f := factor(o.OutputLen); f != 1 {
		did = append(did, fmt.Sprintf("outputs ×%g", f))
	}
	if o.MaxOSL > 0 {
		did = append(did, fmt.Sprintf("%d outputs capped at %d", s.cappedOSL, o.MaxOSL))
	}
	if len(did) > 0 {
		out = append(out, "synthesis: "+strings.Join(did, ", "))
	}
	return out
}

// synthesizeRows reshapes trace rows (Mooncake's, or Bailian's and WEKA's
// laid out as Mooncake's) as AIPerf's synthesizer does, in its order: rows
// over MaxISL left out; hash ids and lengths reshaped; timestamps
// compressed; output lengths scaled, then capped at MaxOSL. Hash ids then
// cover their rows' lengths again (fitBlocks).
func synthesizeRows(rows []MooncakeRow, blockSize int, o *SynthesisOptions, seed uint64) ([]MooncakeRow, []string) {
	if !o.any() {
		return rows, nil
	}
	var st synthStats
	if o.MaxISL > 0 {
		kept := rows[:0:0]
		for _, r := range rows {
			if r.InputLength > o.MaxISL {
				st.overISL++
				continue
			}
			kept = append(kept, r)
		}
		rows = kept
	}
	if o.reshapes() {
		reshapeRows(rows, blockSize, o, seed)
	}
	for i := range rows {
		r := &rows[i]
		if f := factor(o.Speedup); f != 1 && r.HasTimestamp {
			r.Timestamp = math.Floor(r.Timestamp / f)
		}
		if f := factor(o.OutputLen); f != 1 && r.OutputLength > 0 {
			r.OutputLength = max(int(math.Round(float64(r.OutputLength)*f)), 1)
		}
		if o.MaxOSL > 0 && r.OutputLength > o.MaxOSL && !strings.Contains(r.SessionID, "::sa:") {
			r.OutputLength = o.MaxOSL
			st.cappedOSL++
		}
	}
	fitBlocks(rows, blockSize)
	return rows, st.lines(o)
}

// reshapeRows applies the prefix, prompt and tree multipliers to every
// generated row with hash ids, as AIPerf's synthesizer does: a row's
// shared prefix is its leading run of ids that some other row names too;
// the prefix is stretched (each id into int(PrefixLen) interleaved ids,
// fresh ones for the fraction) or cut; the unique rest becomes
// int(rest × PromptLen) tokens of fresh blocks; PrefixRoot then moves each
// row's ids into one of that many id ranges at random.
func reshapeRows(rows []MooncakeRow, bs int, o *SynthesisOptions, seed uint64) {
	count := map[int64]int{}
	for _, r := range rows {
		if r.generated() {
			for _, h := range r.HashIDs {
				count[h]++
			}
		}
	}
	var maxShared int64
	for h, n := range count {
		if n > 1 {
			maxShared = max(maxShared, h)
		}
	}
	prefixMult, promptMult := factor(o.PrefixLen), factor(o.PromptLen)
	stretch := 1
	if prefixMult > 1 {
		stretch = int(prefixMult)
	}
	maxID := (maxShared + 1) * int64(stretch)
	for i := range rows {
		r := &rows[i]
		if !r.generated() || len(r.HashIDs) == 0 {
			continue
		}
		prefix := 0
		for _, h := range r.HashIDs {
			if count[h] < 2 {
				break
			}
			prefix++
		}
		// A shared last block shorter than a block is the prompt's, not
		// the prefix's: the prefix is whole blocks.
		prefix = min(prefix, r.InputLength/bs)
		promptLen := r.InputLength - prefix*bs
		var ids []int64
		switch {
		case prefixMult > 1:
			for _, h := range r.HashIDs[:prefix] {
				for j := range stretch {
					ids = append(ids, h*int64(stretch)+int64(j))
				}
			}
			for extra := int(math.Ceil(float64(prefix)*prefixMult)) - len(ids); extra > 0; extra-- {
				maxID++
				ids = append(ids, maxID)
			}
		case prefixMult < 1 && prefix > 0:
			ids = append(ids, r.HashIDs[:max(1, int(float64(prefix)*prefixMult))]...)
		default:
			ids = append(ids, r.HashIDs[:prefix]...)
		}
		prefixBlocks := len(ids)
		newPrompt := int(float64(promptLen) * promptMult)
		for n := (newPrompt + bs - 1) / bs; n > 0; n-- {
			maxID++
			ids = append(ids, maxID)
		}
		r.HashIDs, r.InputLength = ids, prefixBlocks*bs+newPrompt
		if r.InputLength == 0 {
			// Nothing left to send: one fresh token, as a prompt needs one.
			maxID++
			r.HashIDs, r.InputLength = []int64{maxID}, 1
		}
		if o.MaxISL > 0 && r.InputLength > o.MaxISL {
			r.InputLength = o.MaxISL
		}
	}
	if o.PrefixRoot > 1 {
		rng := rand.New(rand.NewPCG(seed, 0x726f6f7473)) // "roots"
		base := maxID + 1
		for i := range rows {
			r := &rows[i]
			if !r.generated() || len(r.HashIDs) == 0 {
				continue
			}
			if k := int64(rng.IntN(o.PrefixRoot)); k > 0 {
				for j := range r.HashIDs {
					r.HashIDs[j] += k * base
				}
			}
		}
	}
}

// synthesizeTurns applies the options that need no hash ids to a loaded
// trace whose rows carry none (Azure, BurstGPT, Baseten): rows over
// MaxISL left out, timestamps compressed, output caps scaled and capped.
// A Baseten row's min_tokens follows its cap.
func synthesizeTurns(d *Dataset, o *SynthesisOptions) []string {
	if !o.any() {
		return nil
	}
	var st synthStats
	convs := d.Conversations[:0]
	for _, c := range d.Conversations {
		turns := c.Turns[:0]
		for _, t := range c.Turns {
			if o.MaxISL > 0 && t.InputTokens > o.MaxISL {
				st.overISL++
				continue
			}
			if f := factor(o.Speedup); f != 1 && t.HasTimestamp {
				t.Timestamp = millis(math.Floor(float64(t.Timestamp.Milliseconds()) / f))
			}
			if f := factor(o.OutputLen); f != 1 && t.MaxTokens > 0 {
				t.MaxTokens = max(int(math.Round(float64(t.MaxTokens)*f)), 1)
			}
			if o.MaxOSL > 0 && t.MaxTokens > o.MaxOSL {
				t.MaxTokens = o.MaxOSL
				st.cappedOSL++
			}
			if _, ok := t.Extra["min_tokens"]; ok {
				e := make(map[string]any, len(t.Extra))
				for k, v := range t.Extra {
					e[k] = v
				}
				e["min_tokens"] = t.MaxTokens
				t.Extra = e
			}
			turns = append(turns, t)
		}
		if len(turns) > 0 {
			c.Turns = turns
			convs = append(convs, c)
		}
	}
	d.Conversations = convs
	return st.lines(o)
}
