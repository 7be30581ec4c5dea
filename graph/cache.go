package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// nodeCache holds the writes of nodes with a CachePolicy, encoded, so a hit
// hands out a fresh copy.
type nodeCache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
}

// cacheEntry is a node's write: the encoded value and, for a node that
// returns the whole state, what each field does with it (see
// fieldPlan.diff). ops is nil for a Partial node (the value is its update)
// and for a state that is not a struct (the value is the whole result).
type cacheEntry struct {
	vals    map[string][]byte
	ops     []fieldOp
	expires time.Time // zero: never
}

// key returns the cache key of a call of n on in, or "" when in cannot be
// encoded (the call is then not cached).
func cacheKey[S any](r *Runner[S], n *node[S], in S) string {
	if k, ok := n.cacheKey.(func(S) string); ok {
		return n.name + "\x00" + k(in)
	}
	if n.cache.Key != nil {
		return n.name + "\x00" + n.cache.Key(in)
	}
	vals, err := r.codec.Encode(in)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(packValues(vals))
	return n.name + "\x00" + hex.EncodeToString(sum[:])
}

// cacheLookup returns the key of a call of n on in and, on a hit, the
// node's result for in: its cached update for a Partial node, or else in
// with the cached write applied.
func cacheLookup[S any](r *Runner[S], n *node[S], in S) (key string, out S, hit bool) {
	key = cacheKey(r, n, in)
	if key == "" {
		return "", out, false
	}
	c := r.cache
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok && !e.expires.IsZero() && !r.cfg.clock().Before(e.expires) {
		delete(c.entries, key)
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		return key, out, false
	}
	w, err := r.codec.Decode(e.vals)
	if err != nil {
		return key, out, false
	}
	if e.ops == nil {
		return key, w, true
	}
	return key, r.plan.patch(in, w, e.ops), true
}

// cacheStore caches under key, for n's TTL, what the call of n on in wrote
// when it returned out.
func cacheStore[S any](r *Runner[S], n *node[S], key string, in, out S) {
	if key == "" {
		return
	}
	var e cacheEntry
	w := out
	if r.plan != nil && !n.partial {
		var d S
		e.ops = r.plan.diff(&in, &out, &d, make([]fieldOp, len(r.plan.fields)), false)
		w = d
	}
	vals, err := r.codec.Encode(w)
	if err != nil {
		return
	}
	e.vals = vals
	if n.cache.TTL > 0 {
		e.expires = r.cfg.clock().Add(n.cache.TTL)
	}
	c := r.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]cacheEntry{}
	}
	c.entries[key] = e
}
