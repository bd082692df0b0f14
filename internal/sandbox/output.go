package sandbox

import (
	"slices"
	"sync"
)

func sortStrings(s []string) { slices.Sort(s) }

// Capped is an io.Writer that keeps the first Max bytes written to it and
// counts the rest, so that a command printing without end is drained
// without the server holding what it printed.
type Capped struct {
	Max int

	mu      sync.Mutex
	buf     []byte
	dropped int64
}

// Write keeps what fits and reports every byte as written.
func (c *Capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.Max - len(c.buf)
	if room > len(p) {
		room = len(p)
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// Bytes returns what was kept.
func (c *Capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.buf)
}

// Truncated says some bytes were dropped.
func (c *Capped) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dropped > 0
}
