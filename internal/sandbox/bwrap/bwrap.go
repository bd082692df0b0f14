// Package bwrap is the local sandbox provider: every command runs under
// bubblewrap in new user, PID, IPC, UTS, mount and (unless the network is
// allowed) network namespaces, over a read-only view of the host's system
// folders, with the box's workspace as its only writable folder besides a
// private /tmp, and with prlimit's resource limits. A box is a workspace
// folder on the host; a command is one bwrap process, so a warm box costs
// no memory between commands.
//
// It imports only internal/sandbox.
package bwrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/dawn-go/dawn/internal/sandbox"
)

// Binaries the provider runs, looked up on PATH.
const (
	Bwrap   = "bwrap"
	Prlimit = "prlimit"
)

// boxUID is the user a command runs as inside its box.
const boxUID = 1000

// nobody is the host user a server running as root drops to before bwrap:
// root's processes escape RLIMIT_NPROC, and root can read what the host's
// file modes deny everyone else.
const nobody = 65534

// Provider runs boxes under bubblewrap. Create it with New.
type Provider struct {
	s       sandbox.Settings
	bwrap   string
	prlimit string
	// root holds the boxes' workspace folders.
	root string
	// cred is the host user bwrap runs as, or nil for the server's own.
	cred *syscall.Credential
}

// New returns a provider with settings s. It finds its binaries and makes
// the folder for the boxes; Preflight proves they work.
func New(s sandbox.Settings) (*Provider, error) {
	p := &Provider{s: s}
	var err error
	if p.bwrap, err = exec.LookPath(Bwrap); err != nil {
		return nil, fmt.Errorf("%w: the local sandbox runs commands under bubblewrap, and %s is not on PATH; install it (Debian: apt-get install bubblewrap) or use provider: docker", sandbox.ErrUnavailable, Bwrap)
	}
	if p.prlimit, err = exec.LookPath(Prlimit); err != nil {
		return nil, fmt.Errorf("%w: the local sandbox sets resource limits with prlimit, and it is not on PATH; install util-linux", sandbox.ErrUnavailable)
	}
	if os.Geteuid() == 0 {
		p.cred = &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}
	}
	if p.root, err = processRoot(); err != nil {
		return nil, fmt.Errorf("the local sandbox cannot make its folder: %w", err)
	}
	return p, nil
}

// processRoot is the one folder of the process's boxes, made on first
// use: every load of the app (a dev reload) shares it.
var processRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "dawn-sandbox-")
	if err == nil {
		err = os.Chmod(dir, 0o711)
	}
	return dir, err
})

// Root is the host folder that holds the boxes' workspaces.
func (p *Provider) Root() string { return p.root }

// Preflight runs "true" in a box: it fails where bwrap cannot make user
// namespaces (a kernel or a container that forbids them).
func (p *Provider) Preflight(ctx context.Context) error {
	b, err := p.Acquire(ctx, "preflight")
	if err != nil {
		return err
	}
	defer b.Close(ctx)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := b.Exec(ctx, "true", sandbox.Output{Max: 4096})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", res.ExitCode, bytes.TrimSpace(res.Stderr))
	}
	if err != nil {
		return fmt.Errorf("%w: bubblewrap cannot start a sandbox on this host (%v); it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, and no container or AppArmor policy denying them), or use provider: docker", sandbox.ErrUnavailable, err)
	}
	return nil
}

// Acquire makes an empty workspace folder for a box.
func (p *Provider) Acquire(_ context.Context, _ string) (sandbox.Box, error) {
	dir, err := os.MkdirTemp(p.root, "box-")
	if err != nil {
		return nil, fmt.Errorf("the local sandbox cannot make a workspace: %w", err)
	}
	b := &box{p: p, dir: dir}
	if err := b.own(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return b, nil
}

// box is a workspace folder on the host.
type box struct {
	p   *Provider
	dir string
}

// own gives path to the host user commands run as.
func (b *box) own(path string) error {
	if b.p.cred == nil {
		return nil
	}
	return os.Lchown(path, int(b.p.cred.Uid), int(b.p.cred.Gid))
}

// systemDirs are the host folders a box sees, read-only; a symlink (as
// /bin is to usr/bin on merged-/usr systems) is recreated as one.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// args are bwrap's arguments for command.
func (b *box) args(command string) []string {
	a := []string{
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session",
		"--uid", strconv.Itoa(boxUID), "--gid", strconv.Itoa(boxUID),
		"--hostname", "sandbox",
	}
	if !b.p.s.Network.Allow {
		a = append(a, "--unshare-net")
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", b.dir, sandbox.Workdir, "--remount-ro", "/", "--chdir", sandbox.Workdir, "--clearenv")
	for _, kv := range b.p.s.Environ() {
		k, v, _ := bytes.Cut([]byte(kv), []byte("="))
		a = append(a, "--setenv", string(k), string(v))
	}
	return append(append(a, "--", b.p.prlimit), append(b.limits(), "/bin/sh", "-c", command)...)
}

// limits are prlimit's flags: soft and hard limit alike, so a command
// cannot raise them.
func (b *box) limits() []string {
	r := b.p.s.Resources
	cpu := int64(r.Timeout/time.Second) + 1
	lim := func(name string, v int64) string { return fmt.Sprintf("--%s=%d:%d", name, v, v) }
	return []string{
		lim("as", int64(r.MemoryMB)<<20),
		lim("nproc", int64(r.Pids)),
		lim("fsize", int64(r.DiskMB)<<20),
		lim("nofile", 256),
		lim("cpu", cpu),
		lim("core", 0),
	}
}

// Exec runs command under bwrap; a deadline kills bwrap, whose PID
// namespace takes every process of the command with it.
func (b *box) Exec(ctx context.Context, command string, out sandbox.Output) (sandbox.Result, error) {
	if _, err := os.Stat(b.dir); err != nil {
		return sandbox.Result{}, fmt.Errorf("%w: the box's workspace folder is gone: %w", sandbox.ErrNotStarted, err)
	}
	stdout, stderr := &sandbox.Capped{Max: out.Max}, &sandbox.Capped{Max: out.Max}
	cmd := exec.Command(b.p.bwrap, b.args(command)...)
	cmd.Dir = b.dir
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: b.p.cred, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sandbox.Result{}, fmt.Errorf("%w: starting bubblewrap: %w", sandbox.ErrNotStarted, err)
	}
	done, killed := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			killed <- true
		case <-done:
			killed <- false
		}
	}()
	err := cmd.Wait()
	close(done)
	timedOut := <-killed
	res := sandbox.Result{
		Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(),
		Duration:  time.Since(start),
	}
	var exit *exec.ExitError
	switch {
	case timedOut:
		res.ExitCode, res.TimedOut = sandbox.TimeoutExit, true
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		if res.ExitCode < 0 { // killed by a signal
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok {
				res.ExitCode = 128 + int(ws.Signal())
			}
		}
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return res, fmt.Errorf("running bubblewrap: %w", err)
	}
	return res, nil
}

// Write puts files into the workspace through os.Root, so that a
// symbolic link a command left never leads a write outside it.
func (b *box) Write(_ context.Context, files []sandbox.File, remove []string) error {
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, name := range remove {
		if err := root.RemoveAll(filepath.FromSlash(name)); err != nil {
			return err
		}
	}
	for _, f := range files {
		name := filepath.FromSlash(f.Path)
		if err := b.mkdirs(root, filepath.Dir(name)); err != nil {
			return err
		}
		_ = root.RemoveAll(name) // a folder or link of that name
		if err := root.WriteFile(name, f.Data, 0o644); err != nil {
			return err
		}
		if b.p.cred != nil {
			if err := root.Lchown(name, int(b.p.cred.Uid), int(b.p.cred.Gid)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mkdirs makes dir and its parents, owned by the box's user.
func (b *box) mkdirs(root *os.Root, dir string) error {
	if dir == "." {
		return nil
	}
	if fi, err := root.Lstat(dir); err == nil && fi.IsDir() {
		return nil
	}
	if err := b.mkdirs(root, filepath.Dir(dir)); err != nil {
		return err
	}
	_ = root.RemoveAll(dir) // a file or link of that name
	if err := root.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if b.p.cred != nil {
		return root.Lchown(dir, int(b.p.cred.Uid), int(b.p.cred.Gid))
	}
	return nil
}

// Read walks the workspace without following links: only regular files
// are read, through os.Root.
func (b *box) Read(_ context.Context, lim sandbox.Limits) (sandbox.Snapshot, error) {
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return sandbox.Snapshot{}, err
	}
	defer root.Close()
	return sandbox.ReadFS(root, lim)
}

// Close removes the workspace folder.
func (b *box) Close(context.Context) error { return os.RemoveAll(b.dir) }
