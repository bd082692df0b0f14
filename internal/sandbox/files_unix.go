//go:build unix

package sandbox

import "syscall"

const (
	syscallNoFollow = syscall.O_NOFOLLOW
	syscallNonBlock = syscall.O_NONBLOCK
)
