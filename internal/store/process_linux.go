package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// localProcess returns where a pid of this process means something, and
// when this process started. Two processes with the same host name, boot
// id and pid namespace see the same pids; a container with a pid namespace
// of its own does not, and so never judges another's pids. The start time
// (in clock ticks since boot) tells this process from a later one that
// got its pid.
func localProcess(host string) (hostKey, procStart string) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", ""
	}
	_, procStart = procStat(os.Getpid())
	return host + "/" + strings.TrimSpace(string(boot)) + "/" + ns, procStart
}

// processGone reports whether the process pid that started at procStart no
// longer runs: no process has that pid, or it is a zombie, or it started
// at another time.
func processGone(pid int, procStart string) bool {
	if pid <= 0 {
		return false
	}
	state, start := procStat(pid)
	switch {
	case state == "":
		// No stat file: the process is gone, or /proc hides other
		// users' processes (hidepid); the kernel tells them apart.
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	case state == "Z" || state == "X":
		return true
	default:
		return procStart != "" && start != procStart
	}
}

// procStat returns the state and start time of process pid from
// /proc/<pid>/stat, or "" for both when there is no such file.
func procStat(pid int) (state, start string) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "?", "" // unreadable: alive as far as we know
		}
		return "", ""
	}
	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses itself: the fields after it start past the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "?", ""
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (state); the start time is field 22.
	if len(fields) < 20 {
		return "?", ""
	}
	return fields[0], fields[19]
}
