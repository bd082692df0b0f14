package sandbox

import (
	"fmt"
	"strconv"

	"github.com/dawn-go/dawn/internal/yamldoc"
	"gopkg.in/yaml.v3"

	sbx "github.com/dawn-go/dawn/internal/sandbox"
)

// ConfigKey is the dawn.yaml section that configures the sandbox.
const ConfigKey = "sandbox"

// Providers.
const (
	Local  = "local"
	Docker = "docker"
)

const example = `sandbox: {provider: local, network: {mode: deny}, resources: {memory_mb: 512, cpus: 1, timeout: 2m, pids: 256, disk_mb: 256}, env: {LANG: C.UTF-8}, idle_timeout: 10m}`

// parseSettings reads dawn.yaml's sandbox section; defaults fill what it
// leaves out. An error names the key and what to write.
func parseSettings(n *yaml.Node) (sbx.Settings, error) {
	s := sbx.Settings{
		Resources: sbx.Resources{
			MemoryMB: sbx.DefaultMemoryMB, CPUs: sbx.DefaultCPUs, Timeout: sbx.DefaultTimeout,
			Pids: sbx.DefaultPids, DiskMB: sbx.DefaultDiskMB,
		},
		IdleTimeout: sbx.DefaultIdleTimeout,
	}
	n = yamldoc.Resolve(n)
	if n.Kind != yaml.MappingNode {
		return s, fmt.Errorf("%s must be a mapping, like %s", ConfigKey, example)
	}
	for k, v := range yamldoc.Pairs(n) {
		if err := setTop(&s, k.Value, yamldoc.Resolve(v)); err != nil {
			return s, err
		}
	}
	switch {
	case s.Provider == "":
		return s, fmt.Errorf("%s.provider is missing; write provider: local (bubblewrap) or provider: docker, like %s", ConfigKey, example)
	case s.Provider == Docker && s.Image == "":
		return s, fmt.Errorf("%s.image is missing: the docker provider runs commands in a container of that image; name one, like image: debian:stable-slim", ConfigKey)
	case s.Provider == Local && s.Image != "":
		return s, fmt.Errorf("%s.image is set, but the local provider runs the host's own system folders; remove image or use provider: docker", ConfigKey)
	}
	return s, nil
}

func setTop(s *sbx.Settings, key string, v *yaml.Node) error {
	var err error
	switch key {
	case "provider":
		if v.Kind != yaml.ScalarNode || (v.Value != Local && v.Value != Docker) {
			return fmt.Errorf("%s.provider is %q; use local (bubblewrap) or docker", ConfigKey, v.Value)
		}
		s.Provider = v.Value
	case "image":
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return fmt.Errorf("%s.image must be an image name, like image: debian:stable-slim", ConfigKey)
		}
		s.Image = v.Value
	case "network":
		err = setNetwork(s, v)
	case "resources":
		err = setResources(s, v)
	case "env":
		err = setEnv(s, v)
	case "idle_timeout":
		if s.IdleTimeout, err = yamldoc.Duration(v); err != nil {
			err = fmt.Errorf("%s.idle_timeout %v", ConfigKey, err)
		}
	default:
		return fmt.Errorf("%s: unknown key %q; allowed keys are provider, image, network, resources, env, idle_timeout, like %s", ConfigKey, key, example)
	}
	return err
}

func setNetwork(s *sbx.Settings, n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s.network must be a mapping, like network: {mode: deny}", ConfigKey)
	}
	for k, v := range yamldoc.Pairs(n) {
		v = yamldoc.Resolve(v)
		switch k.Value {
		case "mode":
			if v.Kind != yaml.ScalarNode || (v.Value != "deny" && v.Value != "allow") {
				return fmt.Errorf("%s.network.mode is %q; use deny (no network) or allow", ConfigKey, v.Value)
			}
			s.Network.Allow = v.Value == "allow"
		case "denylist":
			var list []string
			if v.Kind != yaml.SequenceNode || v.Decode(&list) != nil {
				return fmt.Errorf("%s.network.denylist must be a list of hosts", ConfigKey)
			}
			if len(list) > 0 {
				return fmt.Errorf("%s.network.denylist lists %d host(s), but neither the local nor the docker provider can enforce a denylist (that needs an egress proxy); use mode: deny for no network, or remove denylist", ConfigKey, len(list))
			}
		default:
			return fmt.Errorf("%s.network: unknown key %q; allowed keys are mode and denylist", ConfigKey, k.Value)
		}
	}
	return nil
}

func setResources(s *sbx.Settings, n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s.resources must be a mapping, like resources: {memory_mb: 512, cpus: 1, timeout: 2m, pids: 256, disk_mb: 256}", ConfigKey)
	}
	for k, v := range yamldoc.Pairs(n) {
		v = yamldoc.Resolve(v)
		key := ConfigKey + ".resources." + k.Value
		var err error
		switch k.Value {
		case "memory_mb":
			s.MemoryMB, err = whole(key, v, 16, 1<<20)
		case "pids":
			s.Pids, err = whole(key, v, 8, 1<<16)
		case "disk_mb":
			s.DiskMB, err = whole(key, v, 1, 1<<20)
		case "cpus":
			f, ferr := strconv.ParseFloat(v.Value, 64)
			if v.Kind != yaml.ScalarNode || ferr != nil || f <= 0 || f > 1024 {
				err = fmt.Errorf("%s must be a positive number of cores, like cpus: 1 or cpus: 0.5", key)
			}
			s.CPUs = f
		case "timeout":
			if s.Timeout, err = yamldoc.Duration(v); err != nil {
				err = fmt.Errorf("%s %v", key, err)
			}
		default:
			return fmt.Errorf("%s.resources: unknown key %q; allowed keys are memory_mb, cpus, timeout, pids, disk_mb", ConfigKey, k.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func whole(key string, n *yaml.Node, lo, hi int) (int, error) {
	v, ok := yamldoc.Int(n)
	if !ok || v < lo || v > hi {
		return 0, fmt.Errorf("%s must be a whole number from %d to %d, not %q", key, lo, hi, n.Value)
	}
	return v, nil
}

func setEnv(s *sbx.Settings, n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s.env must be a mapping of variable names to values, like env: {LANG: C.UTF-8}", ConfigKey)
	}
	s.Env = map[string]string{}
	for k, v := range yamldoc.Pairs(n) {
		v = yamldoc.Resolve(v)
		if !validEnvName(k.Value) || v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s.env: %q must be a variable name (letters, digits, _) with a text value", ConfigKey, k.Value)
		}
		s.Env[k.Value] = v.Value
	}
	return nil
}

func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
