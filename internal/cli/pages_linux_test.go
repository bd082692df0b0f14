package cli

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseStartupPages checks that releasing the start-up pages unmaps
// the test binary's read-only pages (its file-backed RSS falls) and that
// the process runs on: the code comes back from the page cache.
func TestReleaseStartupPages(t *testing.T) {
	before := rssFileKiB(t)
	released, err := releaseStartupPages()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	if released <= 0 || after >= before {
		t.Fatalf("released %d bytes; file-backed RSS %d KiB before, %d KiB after: want it lower", released, before, after)
	}
	if got := strings.Repeat("ab", 3); got != "ababab" { // code still runs
		t.Fatalf("after the release, strings.Repeat gave %q", got)
	}
}

// TestReadOnlyMappings checks which lines of /proc/PID/maps are taken: the
// binary's read-only ones, whatever their offset, not its writable data,
// other files or anonymous memory.
func TestReadOnlyMappings(t *testing.T) {
	maps := `00400000-01463000 r-xp 00000000 fe:00 10661242   /opt/dawn bin/dawn
01463000-02c93000 r--p 01063000 fe:00 10661242   /opt/dawn bin/dawn
02c93000-02d68000 rw-p 02893000 fe:00 10661242   /opt/dawn bin/dawn
02d68000-04db8000 rw-p 00000000 00:00 0
7f7f10d3c000-7f7f10e92000 r-xp 00026000 fe:00 326269  /usr/lib/x86_64-linux-gnu/libc.so.6
`
	got := readOnlyMappings([]byte(maps), "/opt/dawn bin/dawn")
	want := []mapping{{0x400000, 0x1463000}, {0x1463000, 0x2c93000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("readOnlyMappings = %x, want %x", got, want)
	}
}

// rssFileKiB is the process's file-backed RSS, from /proc/self/status.
func rssFileKiB(t *testing.T) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("RssFile line %q: %v", line, err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}
