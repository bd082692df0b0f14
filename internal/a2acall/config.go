package a2acall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// FileName is the file that makes a subagent folder a remote agent.
const FileName = "a2a.yaml"

// Defaults and bounds of an a2a.yaml's settings.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultRetries      = 2
	DefaultMaxTextBytes = 64 << 10
	maxRetries          = 5
	minTextBytes        = 1 << 10
	maxTextBytes        = 1 << 20
	maxFileBytes        = 16 << 10
)

// wellKnownCard is where an agent's card is served when the card URL names
// no path.
const wellKnownCard = "/.well-known/agent-card.json"

// Config is one remote subagent, as its a2a.yaml describes it.
type Config struct {
	// Name is the subagent's name: its folder's.
	Name string
	// File is the a2a.yaml's path.
	File string
	// Card is the URL of the remote agent's card.
	Card string
	// CredentialEnv names the environment variable whose value is sent as
	// a bearer token, or is empty.
	CredentialEnv string
	// Timeout bounds one task call, answers awaited included.
	Timeout time.Duration
	// Retries is how many more times a call that cannot reach the agent
	// at all tries again.
	Retries int
	// MaxTextBytes bounds the text kept of the agent's answer, and of the
	// text streamed on to the run's stream.
	MaxTextBytes int
}

// file is the a2a.yaml's shape.
type file struct {
	Card          string `yaml:"card"`
	CredentialEnv string `yaml:"credential_env"`
	Timeout       string `yaml:"timeout"`
	Retries       *int   `yaml:"retries"`
	MaxTextBytes  *int   `yaml:"max_text_bytes"`
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads the a2a.yaml at path, of the subagent named name. An error
// names the file and the field, and says what to write.
func Parse(path, name string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(raw) > maxFileBytes {
		return Config{}, fmt.Errorf("%s: the file is over %d bytes; it holds only a few settings", path, maxFileBytes)
	}
	var in file
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&in); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, fmt.Errorf("%s: %v; the keys are card, credential_env, timeout, retries and max_text_bytes", path, err)
	}
	c := Config{Name: name, File: path, CredentialEnv: in.CredentialEnv, Timeout: DefaultTimeout, Retries: DefaultRetries, MaxTextBytes: DefaultMaxTextBytes}
	var problems []string
	card, err := cardURL(in.Card)
	if err != nil {
		problems = append(problems, "card "+err.Error())
	}
	c.Card = card
	if in.CredentialEnv != "" && !envName.MatchString(in.CredentialEnv) {
		problems = append(problems, fmt.Sprintf("credential_env %q is not an environment variable's name; write the name (REMOTE_TOKEN), not its value", in.CredentialEnv))
	}
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("timeout %q is not a positive duration; write one such as 90s or 10m", in.Timeout))
		}
		c.Timeout = d
	}
	if in.Retries != nil {
		if *in.Retries < 0 || *in.Retries > maxRetries {
			problems = append(problems, fmt.Sprintf("retries is %d; it must be 0 to %d", *in.Retries, maxRetries))
		}
		c.Retries = *in.Retries
	}
	if in.MaxTextBytes != nil {
		if *in.MaxTextBytes < minTextBytes || *in.MaxTextBytes > maxTextBytes {
			problems = append(problems, fmt.Sprintf("max_text_bytes is %d; it must be %d to %d", *in.MaxTextBytes, minTextBytes, maxTextBytes))
		}
		c.MaxTextBytes = *in.MaxTextBytes
	}
	if len(problems) > 0 {
		return Config{}, fmt.Errorf("%s: %s", path, strings.Join(problems, "; "))
	}
	return c, nil
}

// cardURL checks the card setting: an http or https URL, with the
// well-known card path when it names none.
func cardURL(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", errors.New("is missing; set it to the URL of the remote agent's card (http://host/.well-known/agent-card.json)")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q is not an http or https URL; set it to the URL of the remote agent's card", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = wellKnownCard
	}
	return u.String(), nil
}

// folders returns the a2a.yaml files under the subagents/ folder of the
// route folder dir, by subagent name.
func folders(dir string) map[string]string {
	matches, _ := filepath.Glob(filepath.Join(dir, "subagents", "*", FileName))
	out := map[string]string{}
	for _, m := range matches {
		out[filepath.Base(filepath.Dir(m))] = m
	}
	return out
}
