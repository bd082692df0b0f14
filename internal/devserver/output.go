package devserver

import (
	"bytes"
	"io"
	"sync"
)

// lockedWriter serializes writes, so lines from the dev server, its watcher
// and a child process do not interleave mid-line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func NewLockedWriter(w io.Writer) *lockedWriter {
	if lw, ok := w.(*lockedWriter); ok {
		return lw
	}
	return &lockedWriter{w: w}
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineWriter passes a child process's output on whole lines at a time,
// handing each line to take first: a line take returns true for is kept
// back.
type lineWriter struct {
	out  io.Writer
	take func(line string) bool
	buf  []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	rest := l.buf
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		line := rest[:i+1]
		rest = rest[i+1:]
		if l.take != nil && l.take(string(bytes.TrimRight(line, "\r\n"))) {
			continue
		}
		_, _ = l.out.Write(line) // a terminal that went away must not stop the child
	}
	if len(rest) > 64<<10 { // a very long line: pass it on unsplit
		_, _ = l.out.Write(rest)
		rest = nil
	}
	l.buf = l.buf[:copy(l.buf, rest)]
	return len(p), nil
}

// Flush writes a last line that had no newline.
func (l *lineWriter) Flush() {
	if len(l.buf) > 0 {
		_, _ = l.out.Write(append(l.buf, '\n'))
		l.buf = nil
	}
}
