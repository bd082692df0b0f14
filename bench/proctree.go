package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// processTree returns pid and every process descended from it, found
// through the parent ids in /proc/<pid>/stat. A server may run helpers of
// its own (Dawn (TypeScript)'s tsx keeps an esbuild process); what they
// use is the server's cost too.
func processTree(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoProcfs, err)
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		if err != nil {
			continue // ended while we looked
		}
		if parent, err := parseStatPPID(data); err == nil {
			children[parent] = append(children[parent], child)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree, nil
}

// parseStatPPID returns the parent process id (field 4) from the text of
// /proc/<pid>/stat, counting fields from the last ')' as parseStatCPU does.
func parseStatPPID(data []byte) (int, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return 0, errors.New("/proc stat: no ')' after the command name")
	}
	fields := bytes.Fields(data[end+1:])
	// fields[0] is field 3 (state); the parent id is field 4.
	if len(fields) < 2 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want at least 2", len(fields))
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil || ppid < 0 {
		return 0, fmt.Errorf("/proc stat: parent id %q is not a process id", fields[1])
	}
	return ppid, nil
}

// treeCPU is the user+system CPU time used so far by pid and the processes
// descended from it that are still running.
func treeCPU(pid int) (time.Duration, error) { return treeSum(pid, processCPU) }

// treeRSS is the resident set size, in bytes, of pid and the processes
// descended from it.
func treeRSS(pid int) (int64, error) { return treeSum(pid, processRSS) }

// treeSum adds up of(p) over pid and the processes descended from it; only
// pid's own figure must be readable (a descendant may end while it reads).
func treeSum[T time.Duration | int64](pid int, of func(int) (T, error)) (T, error) {
	pids, err := processTree(pid)
	if err != nil {
		return 0, err
	}
	var total T
	for i, p := range pids {
		n, err := of(p)
		if err != nil && i == 0 {
			return 0, err
		}
		total += n
	}
	return total, nil
}
