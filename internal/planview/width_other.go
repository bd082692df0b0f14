//go:build !unix

package planview

// TerminalWidth returns 0 (unknown) where the terminal size cannot be read
// without more dependencies; the caller falls back to $COLUMNS or 80.
func TerminalWidth(fd uintptr) int { return 0 }
