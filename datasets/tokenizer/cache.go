package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
)

// pieceCache remembers the BPE result of recent pre-tokens (words repeat a
// lot in prose). It is split into shards, each with its own lock, so that
// goroutines counting in parallel rarely meet on one; a full shard is
// cleared rather than evicted piece by piece.
type pieceCache struct {
	once   sync.Once
	off    bool // set by benchmarks to time the merge loop alone
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

const (
	cacheShards   = 64
	cacheShardCap = 1024 // pieces per shard
	cacheMaxPiece = 32   // longer pieces are rare repeats: not cached
)

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int32
	_  [40]byte // keep shards on separate cache lines
}

func (c *pieceCache) shard(p string) *cacheShard {
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	return &c.shards[maphash.String(c.seed, p)%cacheShards]
}

func (c *pieceCache) get(p string) ([]int32, bool) {
	if len(p) > cacheMaxPiece || c.off {
		return nil, false
	}
	s := c.shard(p)
	s.mu.RLock()
	ids, ok := s.m[p]
	s.mu.RUnlock()
	return ids, ok
}

func (c *pieceCache) put(p string, ids []int32) {
	if len(p) > cacheMaxPiece || c.off {
		return
	}
	s := c.shard(p)
	kept := append([]int32(nil), ids...)
	key := strings.Clone(p) // do not pin the caller's text
	s.mu.Lock()
	if s.m == nil || len(s.m) >= cacheShardCap {
		s.m = make(map[string][]int32, cacheShardCap)
	}
	s.m[key] = kept
	s.mu.Unlock()
}
