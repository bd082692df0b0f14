package mcptools

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Key is the dawn.yaml key that lists MCP servers.
const Key = "mcp"

// Server is one MCP server dawn.yaml names under mcp:. Exactly one of
// Command and URL is set.
type Server struct {
	// Name is the server's key under mcp:; its tools are named
	// Name_tool.
	Name string
	// Command and Args start a stdio server; Env adds to the process's
	// environment. Values may use $VAR or ${VAR}, expanded from the
	// environment.
	Command string
	Args    []string
	Env     map[string]string
	// URL is a streamable-HTTP server; Headers are sent with every request,
	// with $VAR or ${VAR} expanded from the environment.
	URL     string
	Headers map[string]string
	// Timeout bounds each call of the server's tools; zero leaves it to
	// tools.timeout in dawn.yaml, else the runtime's default.
	Timeout time.Duration
	// Idempotent, when set, declares every tool of the server idempotent
	// (true) or not (false) whatever its idempotentHint annotation says;
	// unset, a tool is idempotent when the server annotates it so.
	Idempotent *bool
}

// Transport names how Dawn reaches the server, for `dawn routes`.
func (s Server) Transport() string {
	if s.URL != "" {
		return "http " + s.URL
	}
	return "stdio " + strings.Join(append([]string{s.Command}, s.Args...), " ")
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

var serverKeys = []string{"command", "args", "env", "url", "headers", "timeout", "idempotent"}

// parseServers reads the mcp: section. Errors name mcp.<server>.<key>; the
// host adds the file.
func parseServers(n *yaml.Node) ([]Server, error) {
	if yamldoc.IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: mcp must be a mapping of server names to servers, such as\n  mcp:\n    everything:\n      command: npx\n      args: [\"@modelcontextprotocol/server-everything\"]", n.Line)
	}
	var out []Server
	for key, val := range yamldoc.Pairs(n) {
		where := "mcp." + key.Value
		if !serverName.MatchString(key.Value) {
			return nil, fmt.Errorf("line %d: %s: a server name may hold only letters, digits, _ and -, since it prefixes the server's tool names", key.Line, where)
		}
		if slices.ContainsFunc(out, func(s Server) bool { return s.Name == key.Value }) {
			return nil, fmt.Errorf("line %d: %s appears twice; keep one", key.Line, where)
		}
		if val.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: %s must be a mapping with command (and args, env) or url (and headers)", val.Line, where)
		}
		s := Server{Name: key.Value}
		for k, v := range yamldoc.Pairs(val) {
			if !slices.Contains(serverKeys, k.Value) {
				return nil, fmt.Errorf("line %d: field %s.%s not found; allowed keys: %s", k.Line, where, k.Value, strings.Join(serverKeys, ", "))
			}
			if err := s.set(k.Value, v); err != nil {
				return nil, fmt.Errorf("line %d: %s.%s: %v", k.Line, where, k.Value, err)
			}
		}
		switch {
		case s.Command == "" && s.URL == "":
			return nil, fmt.Errorf("line %d: %s needs command (a stdio server) or url (a streamable-HTTP server)", key.Line, where)
		case s.Command != "" && s.URL != "":
			return nil, fmt.Errorf("line %d: %s sets both command and url; a server is one or the other", key.Line, where)
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0):
			return nil, fmt.Errorf("line %d: %s: args and env go with command, not url", key.Line, where)
		case s.Command != "" && len(s.Headers) > 0:
			return nil, fmt.Errorf("line %d: %s: headers go with url, not command", key.Line, where)
		case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
			return nil, fmt.Errorf("line %d: %s.url %q must start with http:// or https://", key.Line, where, s.URL)
		}
		out = append(out, s)
	}
	return out, nil
}

// set reads the server's setting key from v.
func (s *Server) set(key string, v *yaml.Node) error {
	switch key {
	case "command":
		return decodeText(v, &s.Command)
	case "url":
		return decodeText(v, &s.URL)
	case "args":
		return v.Decode(&s.Args)
	case "env":
		return v.Decode(&s.Env)
	case "headers":
		return v.Decode(&s.Headers)
	case "timeout":
		var err error
		s.Timeout, err = yamldoc.Duration(v)
		return err
	case "idempotent":
		var b bool
		if v.Decode(&b) != nil {
			return fmt.Errorf("must be true or false")
		}
		s.Idempotent = &b
		return nil
	}
	return fmt.Errorf("unknown setting")
}

func decodeText(n *yaml.Node, dst *string) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("must be text")
	}
	*dst = n.Value
	return nil
}

// expand expands $VAR and ${VAR} in v from getenv. A variable that is not
// set is an error naming it, so a missing token is not sent as "Bearer ".
func expand(v string, getenv func(string) (string, bool)) (string, error) {
	var missing []string
	out := os.Expand(v, func(name string) string {
		val, ok := getenv(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}
