//go:build unix && !linux

package store

import "syscall"

// localProcess returns where a pid of this process means something: the
// host name. The start time of a process is not known here, so a reused
// pid passes for the process that had it until that one's lease expires.
func localProcess(host string) (hostKey, procStart string) {
	return host, ""
}

// processGone reports whether no process has the given pid.
func processGone(pid int, _ string) bool {
	return pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH
}
