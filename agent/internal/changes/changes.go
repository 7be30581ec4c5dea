package changes

import "path/filepath"

// Set lists changed paths in the order first touched; its zero value is
// empty and ready to use.
type Set struct {
	paths []string
	seen  map[string]bool
}

// Add notes path p, slash separated and cleaned, unless it is noted already.
func (c *Set) Add(p string) {
	p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if !c.seen[p] {
		c.seen[p] = true
		c.paths = append(c.paths, p)
	}
}

// List returns a copy of the paths noted, in order.
func (c *Set) List() []string { return append([]string(nil), c.paths...) }
