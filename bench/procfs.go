package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, which is
// 100 on every mainstream Linux build.
const userHZ = 100

// errNoProcfs says the figure needs Linux's /proc.
var errNoProcfs = errors.New("needs Linux /proc")

// processCPU returns the user+system CPU time process pid has used so far,
// from /proc/<pid>/stat (10 ms resolution).
func processCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoProcfs, err)
	}
	ticks, err := parseStatCPU(data)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseStatCPU returns utime+stime, in clock ticks, from the text of
// /proc/<pid>/stat. The command name (field 2) is in parentheses and may
// hold spaces and parentheses itself, so fields are counted from the last
// ')'.
func parseStatCPU(data []byte) (int64, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, errors.New("/proc stat: no ')' after the command name")
	}
	fields := bytes.Fields(data[end+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want at least %d", len(fields), stime+1)
	}
	var total int64
	for _, f := range [][]byte{fields[utime], fields[stime]} {
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc stat: CPU time %q is not a tick count", f)
		}
		total += n
	}
	return total, nil
}

// processRSS returns process pid's resident set size in bytes, from VmRSS in
// /proc/<pid>/status.
func processRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoProcfs, err)
	}
	kib, err := parseVmRSS(data)
	return kib << 10, err
}

// parseVmRSS returns the VmRSS line's value, in KiB, from the text of
// /proc/<pid>/status ("VmRSS:	    2080 kB").
func parseVmRSS(data []byte) (int64, error) {
	for line := range bytes.Lines(data) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) != 2 || string(fields[1]) != "kB" {
			return 0, fmt.Errorf("/proc status: VmRSS line %q is not \"VmRSS: N kB\"", bytes.TrimSpace(line))
		}
		n, err := strconv.ParseInt(string(fields[0]), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc status: VmRSS %q is not a size", fields[0])
		}
		return n, nil
	}
	return 0, errors.New("/proc status: no VmRSS line (a kernel thread, or a zombie)")
}

// listenerPID returns the id of the process listening on the loopback TCP
// port of rawURL (http://127.0.0.1:PORT), found through /proc/net/tcp's
// socket inode and the processes' open files; 0 with an error when none is
// found, such as when the server runs as another user or on another OS.
func listenerPID(rawURL string) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("%s: no port", rawURL)
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		if inode = listenInode(data, port); inode != "" {
			break
		}
	}
	if inode == "" {
		return 0, fmt.Errorf("%w: no socket listening on port %d in /proc/net/tcp", errNoProcfs, port)
	}
	target := "socket:[" + inode + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoProcfs, err)
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && link == target {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: no process of this user holds the socket of port %d", errNoProcfs, port)
}

// listenInode returns the inode of the listening socket on port in the text
// of /proc/net/tcp or tcp6, or "".
func listenInode(data []byte, port int) string {
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		if len(f) < 10 || string(f[3]) != "0A" {
			continue
		}
		_, hexPort, ok := bytes.Cut(f[1], []byte(":"))
		if p, err := strconv.ParseInt(string(hexPort), 16, 32); ok && err == nil && int(p) == port {
			return string(f[9])
		}
	}
	return ""
}
