//go:build unix

package planview

import "golang.org/x/sys/unix"

// TerminalWidth returns the width in columns of the terminal open as fd, or
// 0 when fd is not a terminal or the width is unknown.
func TerminalWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
