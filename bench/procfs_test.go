package main

import (
	"os"
	"strings"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	tail := " 0 0 0 0 0 0 20 0 1 0 169163 3133440 393"
	cases := []struct {
		name  string
		stat  string
		ticks int64
		ok    bool
	}{
		{"plain", "7218 (cat) R 7214 7214 31148 0 -1 4194304 99 0 0 0 12 30" + tail, 42, true},
		{"name with spaces and parens", "9 (my (odd) name) S 1 1 1 0 -1 0 0 0 0 0 5 6" + tail, 11, true},
		{"no parens", "9 cat R 1 1 1", 0, false},
		{"too short", "9 (cat) R 1 1", 0, false},
		{"not a number", "9 (cat) R 1 1 1 0 -1 0 0 0 0 0 x 6" + tail, 0, false},
		{"negative", "9 (cat) R 1 1 1 0 -1 0 0 0 0 0 -5 6" + tail, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tc.stat))
			if (err == nil) != tc.ok || got != tc.ticks {
				t.Fatalf("parseStatCPU = %d, %v; want %d, ok=%v", got, err, tc.ticks, tc.ok)
			}
		})
	}
}

func TestParseVmRSS(t *testing.T) {
	cases := []struct {
		name   string
		status string
		kib    int64
		ok     bool
	}{
		{"usual", "Name:\tcat\nVmPeak:\t 3060 kB\nVmRSS:\t    2080 kB\nThreads:\t1\n", 2080, true},
		{"last line without newline", "Name:\tcat\nVmRSS:\t7 kB", 7, true},
		{"kernel thread", "Name:\tkthreadd\nThreads:\t1\n", 0, false},
		{"bad unit", "VmRSS:\t7 MB\n", 0, false},
		{"bad number", "VmRSS:\tseven kB\n", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseVmRSS([]byte(tc.status))
			if (err == nil) != tc.ok || got != tc.kib {
				t.Fatalf("parseVmRSS = %d, %v; want %d, ok=%v", got, err, tc.kib, tc.ok)
			}
		})
	}
}

// TestOwnProcess reads this test process's own figures where /proc exists.
func TestOwnProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	if _, err := processCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	rss, err := processRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Fatalf("rss = %d, %v", rss, err)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("7218 (cat) R 7214 7214 31148 0 -1 4194304 99 0 0 0 12 30 0 0 20 0 1 0 169163 3133440 393"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ticks, err := parseStatCPU(data)
		if err == nil && ticks < 0 {
			t.Fatalf("negative ticks %d from %q", ticks, data)
		}
	})
}

func FuzzParseVmRSS(f *testing.F) {
	f.Add([]byte("Name:\tcat\nVmRSS:\t    2080 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kib, err := parseVmRSS(data)
		if err == nil && (kib < 0 || !strings.Contains(string(data), "VmRSS:")) {
			t.Fatalf("parseVmRSS(%q) = %d without error", data, kib)
		}
	})
}

// TestListenInode finds the listening socket of a port, not a connection
// from or to it.
func TestListenInode(t *testing.T) {
	table := []byte(`  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A341 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 20 4 30 10 -1
   1: 0100007F:A341 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
`)
	if got := listenInode(table, 0xA341); got != "222" {
		t.Errorf("listenInode = %q, want 222", got)
	}
	if got := listenInode(table, 80); got != "" {
		t.Errorf("listenInode(80) = %q, want none", got)
	}
}
