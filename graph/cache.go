package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// nodeCache holds the results of nodes with a CachePolicy, encoded, so a hit
// hands out a fresh copy.
type nodeCache struct {
	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	vals    map[string][]byte
	expires time.Time // zero: never
}

// key returns the cache key of a call of n on in, or "" when in cannot be
// encoded (the call is then not cached).
func cacheKey[S any](r *Runner[S], n *node[S], in S) string {
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

// cacheLookup returns the key of a call of n on in and, on a hit, a copy
// of the result cached under it.
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
	out, err := r.codec.Decode(e.vals)
	if err != nil {
		return key, out, false
	}
	return key, out, true
}

// cacheStore caches out under key for n's TTL.
func cacheStore[S any](r *Runner[S], n *node[S], key string, out S) {
	if key == "" {
		return
	}
	vals, err := r.codec.Encode(out)
	if err != nil {
		return
	}
	e := cacheEntry{vals: vals}
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
