package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// releaseStartupPages unmaps the pages of the process's own binary that are
// read-only (its code and constant data) from the process, and returns how
// many bytes were mapped. Start-up runs every linked package's init (a few
// hundred of them, spread over the whole binary), and each page fault on a
// file maps the 64 KiB around it (the kernel's fault-around), so a server
// that has just started maps most of its binary: about 25 MiB of its idle
// RSS. The pages stay in the page cache: the code a server then runs comes
// back on its first use with a minor fault, without a disk read, and the
// rest, such as the inits, is no longer counted. Writable mappings (the
// binary's data) are left alone: only clean, read-only pages are dropped,
// which changes no byte the process sees.
func releaseStartupPages() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	var released int64
	for _, m := range readOnlyMappings(maps, exe) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.start, m.end-m.start, syscall.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %x-%x of %s: %w", m.start, m.end, exe, errno)
		}
		released += int64(m.end - m.start)
	}
	return released, nil
}

// mapping is an address range of /proc/self/maps.
type mapping struct{ start, end uintptr }

// readOnlyMappings returns the ranges of the maps text (/proc/PID/maps)
// that map file path without write permission.
func readOnlyMappings(maps []byte, path string) []mapping {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := bytes.Fields(sc.Bytes())
		if len(f) < 6 || string(bytes.Join(f[5:], []byte(" "))) != path {
			continue
		}
		if perms := f[1]; len(perms) < 2 || perms[0] != 'r' || perms[1] != '-' {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		out = append(out, mapping{uintptr(start), uintptr(end)})
	}
	return out
}
