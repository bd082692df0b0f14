package sandbox

import "time"

// Settings are the sandbox section of dawn.yaml, with defaults filled in.
type Settings struct {
	// Provider is "local" (bubblewrap) or "docker".
	Provider string
	// Image is the docker image; the local provider has none.
	Image   string
	Network Network
	Resources
	// Env is the whole environment of a command, besides PATH and HOME
	// when it leaves them out: nothing of the host's is inherited.
	Env map[string]string
	// IdleTimeout releases a box no command used for this long.
	IdleTimeout time.Duration
}

// Network says whether a box reaches any network.
type Network struct {
	// Allow gives the box the host's network (local) or the default
	// bridge (docker); false leaves it none.
	Allow bool
}

// Resources bound one box.
type Resources struct {
	// MemoryMB caps memory: the cgroup of a docker box; the address
	// space of each process of a local one.
	MemoryMB int
	// CPUs caps CPU cores (docker); the local provider bounds CPU time
	// per process by Timeout instead.
	CPUs float64
	// Timeout is the longest a command runs.
	Timeout time.Duration
	// Pids caps the processes (and threads) of a box.
	Pids int
	// DiskMB caps the writable space of a box: its workspace and /tmp
	// (docker), or each file a command writes (local).
	DiskMB int
}

// Defaults of the settings dawn.yaml leaves out.
const (
	DefaultMemoryMB    = 512
	DefaultCPUs        = 1
	DefaultTimeout     = 2 * time.Minute
	DefaultPids        = 256
	DefaultDiskMB      = 256
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultPath is PATH when sandbox.env sets none.
	DefaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
)

// Environ is the environment of a command: s.Env, with PATH and HOME
// when it sets none, sorted.
func (s Settings) Environ() []string {
	env := map[string]string{"PATH": DefaultPath, "HOME": Workdir}
	for k, v := range s.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sortStrings(out)
	return out
}
