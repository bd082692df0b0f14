package app_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/internal/app"
	"github.com/dawn-go/dawn/markers"
)

// TestServerSection: server.allowed_hosts reaches Config.Server as bare
// lower-case names, the same through LoadServer; an entry that is not a
// host name is an error naming dawn.yaml, the field and the entry.
func TestServerSection(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"dawn.yaml": "server:\n  allowed_hosts: [Dawn.Internal., 10.0.0.7, '[::1]', my_box]\n"})
	c, err := app.LoadConfig(dir, markers.All())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dawn.internal", "10.0.0.7", "::1", "my_box"}
	if !slices.Equal(c.Server.AllowedHosts, want) {
		t.Errorf("Server.AllowedHosts = %q, want %q", c.Server.AllowedHosts, want)
	}
	if s, err := app.LoadServer(dir); err != nil || !slices.Equal(s.AllowedHosts, want) {
		t.Errorf("LoadServer = %q, %v; want %q", s.AllowedHosts, err, want)
	}
	for yamlText, msg := range map[string]string{
		"server:\n  allowed_hosts: [http://dawn.internal]\n":          `server.allowed_hosts[0]: "http://dawn.internal" is not a host name`,
		"server:\n  allowed_hosts: [ok.test, 'dawn.internal:8000']\n": `server.allowed_hosts[1]: "dawn.internal:8000" is not a host name`,
		"server:\n  allowed_hosts: ['*.example.com']\n":               `"*.example.com" is not a host name`,
		"server:\n  allowed_hosts: dawn.internal\n":                   "server.allowed_hosts must be a list of host names",
		"server:\n  hosts: [a]\n":                                     "field server.hosts not found; allowed keys in server: allowed_hosts",
	} {
		write(t, dir, map[string]string{"dawn.yaml": yamlText})
		if _, err := app.LoadConfig(dir, markers.All()); err == nil || !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "dawn.yaml") {
			t.Errorf("%q: err = %v, want %q naming dawn.yaml", yamlText, err, msg)
		}
		if _, err := app.LoadServer(dir); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("LoadServer %q: err = %v, want %q", yamlText, err, msg)
		}
	}
}
