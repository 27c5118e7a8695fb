package datasets

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/surgebench/surge/datasets/media"
)

// SyntheticOptions describes generated prompts.
type SyntheticOptions struct {
	// Count is the number of single-turn conversations to build.
	Count int
	// Template is the chat template's wrapping to take off each turn's
	// drawn ISL (--apply-chat-template), so that what the server's
	// template makes of a turn is the length asked for.
	Template TemplateOverhead
	// ISL and ISLStddev give the prompt length in tokens (normal, ≥ 1).
	ISL       int
	ISLStddev float64
	// OSL and OSLStddev give the output cap in tokens (0 OSL: no cap).
	OSL       int
	OSLStddev float64
	// Seed makes the prompts reproducible (--random-seed).
	Seed uint64
	// PrefixPoolSize and PrefixLength (--prompt-prefix-pool-size,
	// --prompt-prefix-length) build a pool of PrefixPoolSize distinct
	// prefixes of PrefixLength tokens; each prompt starts with one drawn at
	// random, so a server's prefix cache sees that many shared prefixes.
	// The prefix comes on top of the sampled ISL.
	PrefixPoolSize, PrefixLength int
	// SharedSystemPromptLength (--shared-system-prompt-length), when
	// positive, gives every conversation the same system prompt of that
	// many tokens.
	SharedSystemPromptLength int
	// Turns and TurnsStddev give each conversation's number of turns
	// (normal, ≥ 1; 0 means 1), as AIPerf's --conversation-turn-mean and
	// -stddev: every turn is a prompt of its own sampled length, and the
	// prefix, if any, opens only the first.
	Turns, TurnsStddev int
	// TurnDelay and TurnDelayStddev give the think time before each turn
	// after the first (normal, ≥ 0, whole milliseconds as AIPerf samples
	// them); 0 sends the next turn as soon as the reply ends.
	TurnDelay, TurnDelayStddev time.Duration
	// RangeRatio, when positive, draws every ISL and OSL uniformly from
	// [mean·(1−RangeRatio), mean·(1+RangeRatio)] (vLLM's and SGLang's
	// --random-range-ratio) instead of a normal around the mean; it must
	// be below 1 and excludes the stddevs.
	RangeRatio float64
	// SeqDist, when set, draws each prompt's ISL and OSL as a pair from a
	// weighted distribution (AIPerf's --seq-dist) instead of ISL and OSL.
	SeqDist *SeqDist
	// Corpus is the text prompts are cut from, one sentence a line; ""
	// is the embedded corpus (PromptCorpus resolves names and files).
	Corpus string
	// Tokenizer measures prompt lengths; nil uses the embedded default.
	Tokenizer Tokenizer
	// Images and Audio, when enabled, give every turn synthetic images
	// and audio clips after its text (AIPerf's --image-* and --audio-*);
	// their seeds follow Seed. With either, ISL may be 0: turns of media
	// alone.
	Images media.ImageOptions
	Audio  media.AudioOptions
}

// Synthetic builds Count conversations (of Turns turns each, on average)
// whose prompts have exactly the sampled number of tokens under the
// tokenizer (plus the prefix, if any); Turn.InputTokens holds that total.
// The same options and seed give byte-identical prompts, and conversation
// i is the same whether it is built here or on demand (Options.OnDemand):
// each is drawn from streams of its own, seeded by the seed and i. Prompts
// are cut from the embedded corpus and share its text through Turn.Parts
// rather than copying it.
//
// Exactness: every piece of a prompt meets the next at a space before a
// word, where byte-level BPE pre-tokenizers split, so lengths add up; in the
// rare case that no sentence start gives a clean cut the prompt is one token
// short.
func Synthetic(o SyntheticOptions) (*Dataset, error) {
	return synthetic(context.Background(), o, false)
}

// MaxHeldConversations bounds the synthetic conversations (and random_pool
// draws) built ahead and held: a run that needs more builds them as it
// sends them (Options.OnDemand), holding only those in flight.
const MaxHeldConversations = 1 << 22

// OnDemandLen is Dataset.Len of synthetic prompts built on demand with no
// Count: more conversations than any run sends (a year at 30,000 a
// second), each distinct.
const OnDemandLen = 1 << 40

// synthetic is Synthetic that stops soon after ctx is done; onDemand
// returns a dataset that builds each conversation when it is asked for.
func synthetic(ctx context.Context, o SyntheticOptions, onDemand bool) (*Dataset, error) {
	withMedia := o.Images.Enabled() || o.Audio.Enabled()
	switch {
	case o.Count < 0 || o.Count == 0 && !onDemand:
		return nil, optionErrorf("Synthetic.Count", "must be positive, got %d", o.Count)
	case o.Count > MaxHeldConversations && !onDemand:
		return nil, optionErrorf("Synthetic.Count", "%d is over the %d conversations held in memory: build them as they are sent (on demand)", o.Count, MaxHeldConversations)
	case onDemand && withMedia:
		what := "Synthetic.Images"
		if !o.Images.Enabled() {
			what = "Synthetic.Audio"
		}
		return nil, optionErrorf(what, "are drawn in order: prompts with media are built ahead, not on demand (give a count of them)")
	}
	if o.ISL < 0 || o.ISL == 0 && !withMedia && o.SeqDist == nil {
		return nil, optionErrorf("Synthetic.ISL", "must be positive, got %d", o.ISL)
	}
	switch r := o.RangeRatio; {
	case !(r >= 0 && r < 1):
		return nil, optionErrorf("Synthetic.RangeRatio", "must be in [0, 1), got %g", r)
	case r > 0 && (o.ISLStddev > 0 || o.OSLStddev > 0):
		return nil, optionErrorf("Synthetic.RangeRatio", "excludes the ISL and OSL stddevs (give one way to vary lengths)")
	case o.SeqDist != nil && (r > 0 || o.ISLStddev > 0 || o.OSLStddev > 0):
		return nil, optionErrorf("Synthetic.SeqDist", "excludes the range ratio and the ISL and OSL stddevs (the pairs carry their own)")
	}
	switch {
	case o.ISLStddev < 0:
		return nil, optionErrorf("Synthetic.ISLStddev", "must not be negative, got %g", o.ISLStddev)
	case o.OSL < 0:
		return nil, optionErrorf("Synthetic.OSL", "must not be negative, got %d", o.OSL)
	case o.OSLStddev < 0:
		return nil, optionErrorf("Synthetic.OSLStddev", "must not be negative, got %g", o.OSLStddev)
	case o.PrefixPoolSize < 0:
		return nil, optionErrorf("Synthetic.PrefixPoolSize", "must not be negative, got %d", o.PrefixPoolSize)
	case o.PrefixLength < 0:
		return nil, optionErrorf("Synthetic.PrefixLength", "must not be negative, got %d", o.PrefixLength)
	case (o.PrefixPoolSize > 0) != (o.PrefixLength > 0):
		return nil, optionErrorf("Synthetic.PrefixPoolSize", "and the prefix length must be given together")
	case o.PrefixPoolSize > MaxHeldConversations:
		return nil, optionErrorf("Synthetic.PrefixPoolSize", "%d is over the limit of %d prefixes", o.PrefixPoolSize, MaxHeldConversations)
	case o.SharedSystemPromptLength < 0:
		return nil, optionErrorf("Synthetic.SharedSystemPromptLength", "must not be negative, got %d", o.SharedSystemPromptLength)
	case o.Turns < 0:
		return nil, optionErrorf("Synthetic.Turns", "must be positive, got %d", o.Turns)
	case o.TurnsStddev < 0:
		return nil, optionErrorf("Synthetic.TurnsStddev", "must not be negative, got %d", o.TurnsStddev)
	case o.Turns > maxSyntheticTurns || o.TurnsStddev > maxSyntheticTurns:
		return nil, optionErrorf("Synthetic.Turns", "and its stddev must be at most %d, got %d and %d", maxSyntheticTurns, o.Turns, o.TurnsStddev)
	case o.TurnDelay < 0:
		return nil, optionErrorf("Synthetic.TurnDelay", "must not be negative, got %s", o.TurnDelay)
	case o.TurnDelayStddev < 0:
		return nil, optionErrorf("Synthetic.TurnDelayStddev", "must not be negative, got %s", o.TurnDelayStddev)
	}
	for _, c := range []struct {
		option string
		n      int
	}{{"Synthetic.ISL", o.ISL}, {"Synthetic.OSL", o.OSL}, {"Synthetic.PrefixLength", o.PrefixLength},
		{"Synthetic.SharedSystemPromptLength", o.SharedSystemPromptLength}} {
		if err := tokensOption(c.option, c.n); err != nil {
			return nil, err
		}
	}
	if err := tokensStddevOption("Synthetic.ISLStddev", o.ISLStddev); err != nil {
		return nil, err
	}
	if err := tokensStddevOption("Synthetic.OSLStddev", o.OSLStddev); err != nil {
		return nil, err
	}
	p, err := newCorpusPrompter(ctx, o.Tokenizer, o.Seed, o.Corpus)
	if err != nil {
		return nil, fmt.Errorf("synthetic dataset: %w", err)
	}
	g, err := newSynthGen(ctx, o, p, onDemand)
	if err != nil {
		return nil, err
	}
	if onDemand {
		return &Dataset{Name: "synthetic", Source: &syntheticSource{g: g}}, nil
	}
	mediaFor, err := syntheticMedia(&o)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Name: "synthetic", Conversations: make([]Conversation, o.Count)}
	for i := range d.Conversations {
		if err := canceled(ctx, i, "synthetic dataset"); err != nil {
			return nil, err
		}
		c := &d.Conversations[i]
		g.build(i, c)
		for j := range c.Turns {
			if c.Turns[j].Media, err = mediaFor(); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// maxSyntheticTurns bounds a synthetic conversation's mean turns (and
// their stddev): a conversation's history is sent with every turn.
const maxSyntheticTurns = 1 << 16

// synthGen builds synthetic conversations one by one, conversation i from
// streams of its own (its turns and delays from one, its lengths and cuts
// from another), so any of them can be built alone, in any order.
type synthGen struct {
	o        SyntheticOptions
	p        *prompter
	system   string
	prefixes []string
	// n numbers the conversations' prompts: turn j of conversation i is
	// prompt i + j·n, spelled in digits head words.
	n, digits, maxTurns int
	// delayScale scales every turn's delay (Options.TurnDelayRatio).
	delayScale float64
}

func newSynthGen(ctx context.Context, o SyntheticOptions, p *prompter, onDemand bool) (*synthGen, error) {
	g := &synthGen{o: o, p: p, n: o.Count, delayScale: 1}
	if onDemand && o.Count == 0 {
		g.n = OnDemandLen
	}
	g.maxTurns = max(o.Turns, 1)
	if o.TurnsStddev > 0 {
		g.maxTurns += 8 * o.TurnsStddev // a draw past 8 stddevs is capped
	}
	g.digits = p.digits(int64(g.n) * int64(g.maxTurns))
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	if o.SharedSystemPromptLength > 0 {
		parts, _ := p.body(nil, rng.IntN(len(p.starts)), o.SharedSystemPromptLength)
		g.system = strings.Join(parts, "")
	}
	// Prefix heads count in their own id space, one word wider than the
	// prompts' so that the two never spell the same words.
	for j := 0; j < o.PrefixPoolSize; j++ {
		if err := canceled(ctx, j, "synthetic prefixes"); err != nil {
			return nil, err
		}
		parts, _ := p.prompt(nil, int64(j), p.digits(int64(o.PrefixPoolSize))+1, o.PrefixLength, rng.IntN(len(p.starts)))
		g.prefixes = append(g.prefixes, strings.Join(parts, ""))
	}
	return g, nil
}

// streams are conversation i's two random streams: its shape (turns,
// delays) and its prompts (lengths, prefix, cuts).
func (g *synthGen) streams(i int) (shape, rng *rand.Rand) {
	k := mix64(uint64(i))
	return rand.New(rand.NewPCG(g.o.Seed, k^0x7075)), rand.New(rand.NewPCG(g.o.Seed^0x5eed, k))
}

// turns draws conversation i's number of turns from its shape stream.
func (g *synthGen) turns(shape *rand.Rand) int {
	return min(sampleLength(shape, max(g.o.Turns, 1), float64(g.o.TurnsStddev), 1), g.maxTurns)
}

// build builds conversation i into c.
func (g *synthGen) build(i int, c *Conversation) {
	o := &g.o
	shape, rng := g.streams(i)
	*c = Conversation{ID: "synthetic-" + strconv.Itoa(i), SystemPrompt: g.system, Turns: make([]Turn, g.turns(shape))}
	for j := range c.Turns {
		var isl, osl int
		switch {
		case o.SeqDist != nil:
			isl, osl = o.SeqDist.draw(rng)
		case o.RangeRatio > 0:
			isl = min(sampleRange(rng, o.ISL, o.RangeRatio), MaxRequestTokens)
			if o.OSL > 0 {
				osl = min(sampleRange(rng, o.OSL, o.RangeRatio), MaxRequestTokens)
			}
		default:
			// A sampled length is capped at MaxRequestTokens.
			isl = min(sampleLength(rng, o.ISL, o.ISLStddev, 1), MaxRequestTokens)
			if o.OSL > 0 {
				osl = min(sampleLength(rng, o.OSL, o.OSLStddev, 1), MaxRequestTokens)
			}
		}
		isl = o.Template.turnISL(isl, j)
		var parts []string
		total := 0
		if len(g.prefixes) > 0 && j == 0 {
			parts = append(parts, g.prefixes[rng.IntN(len(g.prefixes))])
			total = o.PrefixLength
		}
		got := 0
		if o.ISL > 0 || o.SeqDist != nil { // ISL 0: media alone
			parts, got = g.p.prompt(parts, int64(i)+int64(j)*int64(g.n), g.digits, isl, rng.IntN(len(g.p.starts)))
		}
		t := Turn{Parts: parts, InputTokens: total + got, MaxTokens: osl}
		if j > 0 && o.TurnDelay > 0 {
			ms := sampleLength(shape, int(o.TurnDelay.Milliseconds()), float64(o.TurnDelayStddev.Milliseconds()), 0)
			t.Delay = time.Duration(math.Round(float64(time.Duration(ms)*time.Millisecond) * g.delayScale))
		}
		c.Turns[j] = t
	}
}

// syntheticSource is synthetic prompts built on demand (a Source).
type syntheticSource struct{ g *synthGen }

// Len is the Count asked for, or OnDemandLen.
func (s *syntheticSource) Len() int { return s.g.n }

// Turns draws conversation i's turn count (its shape stream's first
// draw), allocating nothing: planning asks for many.
func (s *syntheticSource) Turns(i int) int {
	if s.g.o.TurnsStddev == 0 {
		return max(s.g.o.Turns, 1)
	}
	pcg := rand.NewPCG(s.g.o.Seed, mix64(uint64(i))^0x7075)
	return s.g.turns(rand.New(pcg))
}

// UniformTurns is the fixed turn count, without a stddev.
func (s *syntheticSource) UniformTurns() int {
	if s.g.o.TurnsStddev > 0 {
		return 0
	}
	return max(s.g.o.Turns, 1)
}

// Conversation builds conversation i.
func (s *syntheticSource) Conversation(i int) *Conversation {
	c := &Conversation{}
	s.g.build(i, c)
	return c
}

// scaleDelays scales the delays of the conversations built from now on.
func (s *syntheticSource) scaleDelays(r float64) { s.g.delayScale = r }

// sampleLength draws round(N(mean, stddev)) clamped to at least min.
func sampleLength(rng *rand.Rand, mean int, stddev float64, min int) int {
	v := mean
	if stddev > 0 {
		v = int(math.Round(float64(mean) + rng.NormFloat64()*stddev))
	}
	if v < min {
		v = min
	}
	return v
}

// syntheticMedia returns what gives each turn its images and audio (none
// when neither is enabled). The generators draw from streams of their own,
// so adding media leaves the prompts of a seed alone.
func syntheticMedia(o *SyntheticOptions) (func() ([]media.Part, error), error) {
	var images *media.Images
	var clips *media.Clips
	var err error
	if o.Images.Enabled() {
		imo := o.Images
		imo.Seed = o.Seed
		if images, err = media.NewImages(imo); err != nil {
			return nil, mediaOptionError("Synthetic.Images.", err)
		}
	}
	if o.Audio.Enabled() {
		ao := o.Audio
		ao.Seed = o.Seed
		if clips, err = media.NewClips(ao); err != nil {
			return nil, mediaOptionError("Synthetic.Audio.", err)
		}
	}
	return func() ([]media.Part, error) {
		var parts []media.Part
		if images != nil {
			p, err := images.Next()
			if err != nil {
				return nil, mediaOptionError("Synthetic.Images.", err)
			}
			parts = p
		}
		if clips != nil {
			p, err := clips.Next()
			if err != nil {
				return nil, mediaOptionError("Synthetic.Audio.", err)
			}
			parts = append(parts, p...)
		}
		return parts, nil
	}, nil
}

// mediaOptionError names a media option as an Options field.
func mediaOptionError(prefix string, err error) error {
	var oe *media.OptionError
	if errors.As(err, &oe) {
		return &OptionError{Option: prefix + oe.Option, Reason: oe.Reason, Err: err}
	}
	return fmt.Errorf("synthetic media: %w", err)
}
