package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartBadLease: a DAWN_STORE_LEASE that is not a duration, or too short
// to survive a pause of the process, stops dawn start with an error naming
// the variable, before it serves anything.
func TestStartBadLease(t *testing.T) {
	dir := writeRunApp(t)
	for _, v := range []string{"soon", "10ms", "-5s"} {
		code, _, stderr := runCLI(t, map[string]string{"DAWN_STORE_LEASE": v}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		if code == ExitOK || !strings.Contains(stderr, `DAWN_STORE_LEASE="`+v+`"`) || !strings.Contains(stderr, "at least 1s") {
			t.Errorf("DAWN_STORE_LEASE=%s: exit %d, stderr:\n%s\nwant a failure naming the variable and the minimum", v, code, stderr)
		}
	}
}

// TestStartBadStoreURL: a DAWN_STORE (or dawn.yaml store:) Postgres URL
// that does not parse, or names a database that does not answer, stops
// dawn start with an error that names the setting and the host and does
// not print the password.
func TestStartBadStoreURL(t *testing.T) {
	dir := writeRunApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, tt := range []struct{ url, host string }{
		{"postgres://ann:s3cret-pw@db.example:notaport/app", "db.example"},
		{"postgres://ann:s3cret-pw@" + closed + "/app?sslmode=disable", closed},
	} {
		code, _, stderr := runCLI(t, map[string]string{"DAWN_STORE": tt.url}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
		if code == ExitOK || !strings.Contains(stderr, "DAWN_STORE") || !strings.Contains(stderr, tt.host) || strings.Contains(stderr, "s3cret") {
			t.Errorf("DAWN_STORE=%s: exit %d, stderr:\n%s\nwant a failure naming DAWN_STORE and %s, without the password", tt.url, code, stderr, tt.host)
		}
	}
}

// TestStartStoreURLInDawnYAML: dawn.yaml's store: takes a Postgres URL; one
// that does not answer stops dawn start naming that setting and the host,
// without the password, and DAWN_STORE wins over it.
func TestStartStoreURLInDawnYAML(t *testing.T) {
	dir := writeRunApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	yaml := "store: postgres://ann:s3cret-pw@" + closed + "/app?sslmode=disable\n"
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, nil, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	if code == ExitOK || !strings.Contains(stderr, "store: in dawn.yaml") || !strings.Contains(stderr, closed) || strings.Contains(stderr, "s3cret") {
		t.Errorf("exit %d, stderr:\n%s\nwant a failure naming dawn.yaml's store and %s, without the password", code, stderr, closed)
	}
	code, _, stderr = runCLI(t, map[string]string{"DAWN_STORE": "postgres://bob:other-pw@db.example:notaport/x"}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	if code == ExitOK || !strings.Contains(stderr, "DAWN_STORE") || !strings.Contains(stderr, "db.example") || strings.Contains(stderr, "other-pw") {
		t.Errorf("with DAWN_STORE: exit %d, stderr:\n%s\nwant DAWN_STORE's URL to win", code, stderr)
	}
}

// TestStartIndexWithoutItsModel: a store.index whose embedding model
// cannot be made (its key is not set) stops dawn start with an error that
// names the setting, dawn.yaml and the variable to set.
func TestStartIndexWithoutItsModel(t *testing.T) {
	dir := writeRunApp(t)
	yaml := "store:\n  index: {embed: openai:text-embedding-3-small, dims: 1536}\n"
	if err := os.WriteFile(filepath.Join(dir, "dawn.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, map[string]string{"OPENAI_API_KEY": ""}, "start", "--app", dir, "--host", "127.0.0.1", "--port", "0")
	if code == ExitOK || !strings.Contains(stderr, "store.index.embed in "+filepath.Join(dir, "dawn.yaml")) || !strings.Contains(stderr, "OPENAI_API_KEY is not set") {
		t.Errorf("exit %d, stderr:\n%s\nwant a failure naming store.index.embed, dawn.yaml and OPENAI_API_KEY", code, stderr)
	}
}
