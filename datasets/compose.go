package datasets

import (
	"slices"
	"sort"
	"time"
)

// Concat is one dataset of parts' conversations, part after part: the
// conversations of part k are numbered from Bases()[k]. A part read on
// demand stays on demand, so a sweep of synthetic values costs no more
// than one value. suffix names part k's conversations apart (appended to
// each ID; "" keeps them).
func Concat(name, typ string, parts []*Dataset, suffix func(k int) string) *Dataset {
	c := &concat{parts: parts, suffix: suffix, bases: make([]int, len(parts)+1)}
	for k, p := range parts {
		c.bases[k+1] = c.bases[k] + p.Len()
	}
	return &Dataset{Name: name, Type: typ, Source: c}
}

// Bases are the first conversation of each part of a Concat dataset (nil
// for another).
func (d *Dataset) Bases() []int {
	if c, ok := d.Source.(*concat); ok {
		return c.bases[:len(c.parts)]
	}
	return nil
}

// concat is Concat's Source.
type concat struct {
	parts  []*Dataset
	suffix func(int) string
	bases  []int // bases[k] is part k's first conversation; the last, Len
}

// part finds conversation i: its part and its index there.
func (c *concat) part(i int) (k, j int) {
	k = sort.Search(len(c.parts), func(k int) bool { return c.bases[k+1] > i })
	return k, i - c.bases[k]
}

func (c *concat) Len() int { return c.bases[len(c.parts)] }

func (c *concat) Turns(i int) int {
	k, j := c.part(i)
	return c.parts[k].Turns(j)
}

func (c *concat) UniformTurns() int {
	u := 0
	for _, p := range c.parts {
		pu := uniformTurns(p)
		if pu == 0 || u != 0 && pu != u {
			return 0
		}
		u = pu
	}
	return u
}

func (c *concat) Conversation(i int) *Conversation {
	k, j := c.part(i)
	conv := *c.parts[k].Conversation(j)
	if c.suffix != nil {
		conv.ID += c.suffix(k)
	}
	return &conv
}

func (c *concat) HasTimestamps() bool {
	for _, p := range c.parts {
		if !p.HasTimestamps() {
			return false
		}
	}
	return len(c.parts) > 0
}

func (c *concat) Timestamp(i int) (time.Duration, bool) {
	k, j := c.part(i)
	return c.parts[k].Timestamp(j)
}

// uniformTurns is every conversation's turn count in d, or 0 when they
// differ (or d is empty).
func uniformTurns(d *Dataset) int {
	if d.Source != nil {
		return d.Source.UniformTurns()
	}
	u := 0
	for i := range d.Conversations {
		k := len(d.Conversations[i].Turns)
		if u != 0 && k != u {
			return 0
		}
		u = k
	}
	return u
}

// Each is d with fix applied to every conversation, i its index: now, in
// place, for a held dataset; as each is built for one read on demand. fix
// must give a conversation the same changes every time it is built.
func Each(d *Dataset, fix func(i int, c *Conversation)) *Dataset {
	if d.Source == nil {
		for i := range d.Conversations {
			fix(i, &d.Conversations[i])
		}
		return d
	}
	out := *d
	out.Source = &fixed{Source: d.Source, fix: fix}
	return &out
}

// fixed is Each's Source: its conversations built, then fixed.
type fixed struct {
	Source
	fix func(int, *Conversation)
}

func (f *fixed) Conversation(i int) *Conversation {
	c := *f.Source.Conversation(i)
	// A source may share a conversation's turns (a held part of a
	// Concat): fix a copy, never what other readers see.
	c.Turns = slices.Clone(c.Turns)
	f.fix(i, &c)
	return &c
}

func (f *fixed) HasTimestamps() bool {
	ts, ok := f.Source.(interface{ HasTimestamps() bool })
	return ok && ts.HasTimestamps()
}

func (f *fixed) Timestamp(i int) (time.Duration, bool) {
	if ts, ok := f.Source.(interface {
		Timestamp(int) (time.Duration, bool)
	}); ok {
		return ts.Timestamp(i)
	}
	t := &f.Conversation(i).Turns[0]
	return t.Timestamp, t.HasTimestamp
}
