package mcpserve

import "fmt"

// capped keeps the first max bytes written to it and counts the rest:
// a diff or a log told to a model is bounded, and says by how much it was
// cut. Writes never fail, so the writer it is given finishes its work.
type capped struct {
	max   int
	buf   []byte
	total int
}

// Write keeps what fits and counts all of p.
func (c *capped) Write(p []byte) (int, error) {
	c.total += len(p)
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bounded is text cut to a bound (run_diff's, run_logs').
type Bounded struct {
	Text string `json:"text"`
	// Truncated is true when Text is the first Bytes of TotalBytes.
	Truncated  bool `json:"truncated"`
	Bytes      int  `json:"bytes"`
	TotalBytes int  `json:"total_bytes"`
	// Note says how to see the rest, when Text was cut.
	Note string `json:"note,omitempty"`
}

// bounded is what c kept, cut back to the last whole line when it was
// cut (a line is not left half-written when it can be helped).
func (c *capped) bounded() Bounded {
	b := Bounded{Text: string(c.buf), Bytes: len(c.buf), TotalBytes: c.total, Truncated: c.total > len(c.buf)}
	if b.Truncated {
		for i := len(b.Text) - 1; i > 0; i-- {
			if b.Text[i] == '\n' {
				b.Text = b.Text[:i+1]
				break
			}
		}
		b.Bytes = len(b.Text)
		b.Note = fmt.Sprintf("cut: the first %d of %d bytes; ask for one phase, or a larger max_bytes (at most %d)", b.Bytes, b.TotalBytes, maxMaxBytes)
	}
	return b
}

// Bounds of run_diff and run_logs, in bytes.
const (
	defaultMaxBytes = 64 << 10
	maxMaxBytes     = 1 << 20
)

// byteBound is the bound asked for, within (0, maxMaxBytes]; 0 takes the
// default.
func byteBound(asked int) int {
	switch {
	case asked <= 0:
		return defaultMaxBytes
	case asked > maxMaxBytes:
		return maxMaxBytes
	}
	return asked
}
