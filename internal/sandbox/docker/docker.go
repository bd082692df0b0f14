// Package docker is the docker sandbox provider: a box is a container of
// the configured image, started through the Docker Engine API and
// hardened as Dawn's is: every capability dropped, no-new-privileges, a
// pids limit, a read-only root with tmpfs /tmp, /run and /workspace, a
// non-root user, no network unless allowed, memory and CPU caps, and only
// sandbox.env for an environment. Files go in and out through tar run in
// the container, so the image needs sh and tar (busybox has both).
//
// It imports only internal/sandbox and the Engine API client.
package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/dawn-go/dawn/internal/sandbox"
)

// User is the uid and gid commands run as.
const User = 1000

// Label marks the containers the provider starts, so that an operator
// can find them: docker ps --filter label=dawn.sandbox.
const Label = "dawn.sandbox"

// Provider runs boxes as containers. Create it with New.
type Provider struct {
	s   sandbox.Settings
	cli *client.Client
}

// New returns a provider with settings s, talking to the daemon that
// DOCKER_HOST names (the local socket by default).
func New(s sandbox.Settings) (*Provider, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("%w: the Docker Engine API client: %v", sandbox.ErrUnavailable, err)
	}
	return &Provider{s: s, cli: cli}, nil
}

// Client is the provider's Engine API client.
func (p *Provider) Client() *client.Client { return p.cli }

// Preflight checks that the daemon answers and has the image; it pulls
// nothing.
func (p *Provider) Preflight(ctx context.Context) error {
	if _, err := p.cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("%w: the Docker daemon does not answer (%v); start dockerd, or set DOCKER_HOST, or use provider: local", sandbox.ErrUnavailable, err)
	}
	if _, err := p.cli.ImageInspect(ctx, p.s.Image); err != nil {
		return fmt.Errorf("%w: the image %q is not on the Docker host (%v); pull or build it first (docker pull %s)", sandbox.ErrUnavailable, p.s.Image, err, p.s.Image)
	}
	return nil
}

// aliveFile is written by every command; the container's first process
// empties it, and ends the container once it stayed empty for the idle
// timeout, so that a container outlives its server (a crash, a stop) by
// the idle timeout at most.
const aliveFile = "/tmp/.dawn-alive"

// keepAlive is the container's first process: it waits, reaps what
// commands leave behind, and ends after idle seconds without a command.
// It uses shell builtins only, besides sleep.
func keepAlive(idle time.Duration) []string {
	tick := max(1, min(30, int(idle/time.Second)/4))
	limit := max(tick, int(idle/time.Second))
	script := fmt.Sprintf("trap 'exit 0' TERM; idle=0; while [ $idle -lt %d ]; do sleep %d & wait $!; "+
		"if [ -s %s ]; then : > %s; idle=0; else idle=$((idle+%d)); fi; done", limit, tick, aliveFile, aliveFile, tick)
	return []string{"/bin/sh", "-c", script}
}

// Acquire creates and starts a container.
func (p *Provider) Acquire(ctx context.Context, key string) (sandbox.Box, error) {
	r := p.s.Resources
	pids := int64(r.Pids)
	disk := strconv.Itoa(r.DiskMB) + "m"
	network := container.NetworkMode("none")
	if p.s.Network.Allow {
		network = "bridge"
	}
	user := strconv.Itoa(User)
	created, err := p.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config: &container.Config{
			Image: p.s.Image, Entrypoint: keepAlive(p.s.IdleTimeout), Cmd: nil,
			User: user + ":" + user, WorkingDir: sandbox.Workdir, Env: p.s.Environ(),
			Hostname: "sandbox", NetworkDisabled: !p.s.Network.Allow,
			Labels: map[string]string{Label: "1"},
		},
		HostConfig: &container.HostConfig{
			NetworkMode:    network,
			CapDrop:        []string{"ALL"},
			SecurityOpt:    []string{"no-new-privileges"},
			ReadonlyRootfs: true,
			Tmpfs: map[string]string{
				"/tmp":          "rw,nosuid,nodev,mode=1777,size=" + disk,
				"/run":          "rw,nosuid,nodev,noexec,size=16m",
				sandbox.Workdir: "rw,nosuid,nodev,exec,size=" + disk + ",uid=" + user + ",gid=" + user + ",mode=0755",
			},
			Resources: container.Resources{
				Memory: int64(r.MemoryMB) << 20, MemorySwap: int64(r.MemoryMB) << 20,
				NanoCPUs: int64(r.CPUs * 1e9), PidsLimit: &pids,
				Ulimits: []*container.Ulimit{{Name: "nofile", Soft: 1024, Hard: 1024}, {Name: "core", Soft: 0, Hard: 0}},
			},
			AutoRemove: true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the sandbox container: %w", err)
	}
	b := &box{p: p, id: created.ID}
	if _, err := p.cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		_ = b.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("starting the sandbox container: %w", err)
	}
	return b, nil
}

// box is one container.
type box struct {
	p  *Provider
	id string
}

// wrapper runs the command ($1) and then kills every process it left
// behind, as a local box's PID namespace does: kill -1 spares only the
// wrapper itself and the container's first process.
const wrapper = `echo 1 > ` + aliveFile + ` 2>/dev/null; sh -c "$1"; rc=$?; kill -9 -1 2>/dev/null; exit $rc`

// Exec runs command in the container. At its deadline every process of
// the box but its first is killed; when even that cannot run (a box out
// of pids), the container is.
func (b *box) Exec(ctx context.Context, command string, out sandbox.Output) (sandbox.Result, error) {
	stdout, stderr := &sandbox.Capped{Max: out.Max}, &sandbox.Capped{Max: out.Max}
	start := time.Now()
	code, err := b.run(ctx, []string{"/bin/sh", "-c", wrapper, "sh", command}, nil, stdout, stderr)
	res := sandbox.Result{
		ExitCode: code, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated(), Duration: time.Since(start),
	}
	if ctx.Err() != nil {
		res.ExitCode, res.TimedOut = sandbox.TimeoutExit, true
		return res, b.stop(context.WithoutCancel(ctx))
	}
	return res, err
}

// stop kills what runs in the box after a deadline.
func (b *box) stop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var sink bytes.Buffer
	if code, err := b.run(ctx, []string{"/bin/sh", "-c", "kill -9 -1"}, nil, &sink, &sink); err == nil && code <= 1 {
		return nil
	}
	_, _ = b.p.cli.ContainerKill(ctx, b.id, client.ContainerKillOptions{Signal: "KILL"})
	return errors.New("the command could not be stopped inside its container, so the container was killed")
}

// run executes argv, feeding stdin, until it ends or ctx does; it
// returns the exit code.
func (b *box) run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	ex, err := b.p.cli.ExecCreate(ctx, b.id, client.ExecCreateOptions{
		Cmd: argv, AttachStdout: true, AttachStderr: true, AttachStdin: stdin != nil,
		WorkingDir: sandbox.Workdir, Env: b.p.s.Environ(),
	})
	if err != nil {
		return -1, fmt.Errorf("%w: starting a command in the sandbox container: %w", sandbox.ErrNotStarted, err)
	}
	att, err := b.p.cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return -1, fmt.Errorf("%w: attaching to a command in the sandbox container: %w", sandbox.ErrNotStarted, err)
	}
	defer att.Close()
	if stdin != nil {
		go func() {
			_, _ = io.Copy(att.Conn, stdin)
			_ = att.CloseWrite()
		}()
	}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		done <- err
	}()
	select {
	case <-ctx.Done():
		return -1, ctx.Err()
	case err := <-done:
		if err != nil {
			return -1, fmt.Errorf("reading a command's output: %w", err)
		}
	}
	ins, err := b.p.cli.ExecInspect(context.WithoutCancel(ctx), ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return -1, fmt.Errorf("reading a command's exit code: %w", err)
	}
	return ins.ExitCode, nil
}

// Write removes paths and extracts files with tar in the container.
func (b *box) Write(ctx context.Context, files []sandbox.File, remove []string) error {
	for _, name := range remove {
		if !sandbox.ValidPath(name) {
			return fmt.Errorf("workspace path %q is not a clean relative path", name)
		}
	}
	archive, err := sandbox.Tar(files, ".", User)
	if err != nil {
		return err
	}
	script := `cd ` + sandbox.Workdir + ` && rm -rf -- "$@" && tar -xf -`
	var errOut bytes.Buffer
	code, err := b.run(ctx, append([]string{"/bin/sh", "-c", script, "sh"}, remove...), bytes.NewReader(archive), io.Discard, &errOut)
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exited %d: %s", code, strings.TrimSpace(errOut.String()))
	}
	return err
}

// Read takes the workspace out as a tar stream made in the container.
func (b *box) Read(ctx context.Context, lim sandbox.Limits) (sandbox.Snapshot, error) {
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	go func() {
		code, err := b.run(ctx, []string{"tar", "-cf", "-", "-C", "/", strings.TrimPrefix(sandbox.Workdir, "/")}, nil, pw, &errOut)
		if err == nil && code != 0 {
			err = fmt.Errorf("tar exited %d: %s", code, strings.TrimSpace(errOut.String()))
		}
		pw.CloseWithError(err)
	}()
	snap, err := sandbox.ReadTar(pr, lim)
	if err != nil {
		pr.CloseWithError(err)
		return snap, err
	}
	_, err = io.Copy(io.Discard, pr) // the rest, and tar's exit
	return snap, err
}

// Close removes the container; one that ended on its own is gone already.
func (b *box) Close(ctx context.Context) error {
	_, err := b.p.cli.ContainerRemove(ctx, b.id, client.ContainerRemoveOptions{Force: true})
	if cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err) {
		return nil
	}
	return err
}
