package profile

import (
	"github.com/surgebench/surge/app/cmdline"
	"github.com/surgebench/surge/app/spec"
	"github.com/surgebench/surge/datasets"
	"github.com/surgebench/surge/datasets/tokenizer"
	"github.com/surgebench/surge/loadgen"
)

// checkCacheBust refuses --cache-bust for a dataset whose first turns are
// sent as recorded bodies, where no marker can go.
func checkCacheBust(s *spec.Spec, ds *datasets.Dataset) error {
	if s.Dataset.CacheBust == "" {
		return nil
	}
	if err := datasets.CheckCacheBust(ds); err != nil {
		return cmdline.Usagef("--cache-bust %s: %v", s.Dataset.CacheBust, err)
	}
	return nil
}

// cacheBustOption marks every session's conversation for --cache-bust: a
// marker of its own (from --random-seed and the session's place in the
// plan), its tokens counted with tok (the embedded tokenizer when nil)
// into a first turn whose input length is known.
func cacheBustOption(s *spec.Spec, tok datasets.Tokenizer) (loadgen.Option, error) {
	target := s.Dataset.CacheBust
	if tok == nil {
		t, err := tokenizer.Default()
		if err != nil {
			return nil, err
		}
		tok = t
	}
	seed := s.Seed()
	tokens := len(tok.Encode(datasets.CacheBustMarker(target, seed, "estimate")))
	return loadgen.WithSessionConversation(func(c *datasets.Conversation, key string) *datasets.Conversation {
		return datasets.MarkConversation(c, target, datasets.CacheBustMarker(target, seed, key+"/"+c.ID), tokens)
	}), nil
}
