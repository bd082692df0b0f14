package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Server is dawn.yaml's server: section: how the HTTP server meets the
// requests that reach it.
type Server struct {
	// AllowedHosts are host names, besides loopback ones, that a server
	// with no credential on a loopback address (and dawn dev) answers
	// when a request's Host names them: the names of a reverse proxy or
	// of /etc/hosts entries that point at this machine. Each is a bare
	// name or IP address, lower-cased, without a port or a final dot.
	AllowedHosts []string
}

// serverSection is the dawn.yaml section of the HTTP server's settings.
const serverSection = "server"

// server reads the server: section: {allowed_hosts: [name, ...]}.
func (p *configParser) server(section *yaml.Node) Server {
	var s Server
	if yamldoc.IsNull(section) {
		return s
	}
	if section.Kind != yaml.MappingNode {
		p.fail(section.Line, "%s must be a mapping, like %s: {allowed_hosts: [dawn.internal]}", serverSection, serverSection)
		return s
	}
	for key, val := range yamldoc.Pairs(section) {
		full := serverSection + "." + key.Value
		switch key.Value {
		case "allowed_hosts":
			s.AllowedHosts = p.hostNames(full, val)
		default:
			p.fail(key.Line, "field %s not found; allowed keys in %s: allowed_hosts", full, serverSection)
		}
	}
	return s
}

// hostNames reads a list of host names, each checked by hostName.
func (p *configParser) hostNames(field string, val *yaml.Node) []string {
	if yamldoc.IsNull(val) {
		return nil
	}
	if val.Kind != yaml.SequenceNode {
		p.fail(val.Line, "%s must be a list of host names, like [dawn.internal, dawn.example.com]", field)
		return nil
	}
	var names []string
	for i, item := range val.Content {
		name, err := hostName(item)
		if err != nil {
			p.fail(item.Line, "%s[%d]: %v", field, i, err)
			continue
		}
		names = append(names, name)
	}
	return names
}

// hostName is item as an allowed host name: a DNS name or an IP address,
// lower-cased, without its final dot.
func hostName(item *yaml.Node) (string, error) {
	if item.Kind != yaml.ScalarNode {
		return "", errors.New("must be a host name, like dawn.internal")
	}
	name := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(item.Value)), ".")
	if net.ParseIP(strings.Trim(name, "[]")) != nil {
		return strings.Trim(name, "[]"), nil
	}
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("%q is not a host name: write a bare name like dawn.internal", item.Value)
	}
	for label := range strings.SplitSeq(name, ".") {
		if !isLabel(label) {
			return "", fmt.Errorf("%q is not a host name: write a bare name like dawn.internal, with no scheme, port, path or wildcard", item.Value)
		}
	}
	return name, nil
}

// isLabel reports whether s is one label of a DNS name: 1 to 63 letters,
// digits and hyphens (underscores too, as some internal names use them),
// not starting or ending with a hyphen.
func isLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// LoadServer reads only the server: section of dir/dawn.yaml, for a
// process that serves an app without loading it (dawn dev in front of an
// app's own binary). A missing file is the zero Server.
func LoadServer(dir string) (Server, error) {
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Server{}, nil
	}
	if err != nil {
		return Server{}, err
	}
	root, err := yamldoc.Mapping(data)
	if err != nil {
		return Server{}, fmt.Errorf("%s: %w", path, err)
	}
	p := &configParser{path: path}
	var s Server
	for key, val := range yamldoc.Pairs(root) {
		if key.Value == serverSection {
			s = p.server(val)
		}
	}
	return s, errors.Join(p.errs...)
}
