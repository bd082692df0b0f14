package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Timeouts for a dev child.
const (
	childStartTimeout = 60 * time.Second // from exec to /healthz answering
	childStopTimeout  = 10 * time.Second // from SIGTERM to kill
)

// devChild is one run of the app's own binary, serving on a port of its own.
type devChild struct {
	cmd    *exec.Cmd
	stdin  io.Closer
	url    *url.URL
	exited chan struct{} // closed once the process has exited
	err    error         // how it exited; valid after exited
	out    *lineWriter
}

// startChild runs bin as a dev child for appDir and waits until its
// /healthz answers. Its output goes to stdout and stderr, except its ready
// line.
func startChild(ctx context.Context, bin, appDir string, stdout, stderr io.Writer) (*devChild, error) {
	ready := make(chan string, 1)
	c := &devChild{exited: make(chan struct{})}
	c.out = &lineWriter{out: stdout, take: func(line string) bool {
		for _, prefix := range []string{ChildReadyPrefix, ReadyPrefix} {
			if addr, ok := strings.CutPrefix(line, prefix); ok {
				select {
				case ready <- addr:
				default:
				}
				return true
			}
		}
		return false
	}}
	c.cmd = exec.Command(bin, "dev", "--app", appDir, "--port", "0")
	c.cmd.Env = append(os.Environ(), ChildEnv+"=1")
	c.cmd.Stdout = c.out
	c.cmd.Stderr = &lineWriter{out: stderr}
	c.cmd.WaitDelay = 2 * time.Second // a grandchild holding the output must not hang Wait
	stdin, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	c.stdin = stdin
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the app's binary %s: %w", bin, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		c.out.Flush()
		close(c.exited)
	}()

	timeout := time.NewTimer(childStartTimeout)
	defer timeout.Stop()
	var addr string
	select {
	case addr = <-ready:
	case <-c.exited:
		return nil, fmt.Errorf("the app exited before it was ready (%v); see its output above", c.exitStatus())
	case <-timeout.C:
		c.stop()
		return nil, fmt.Errorf("the app did not print its ready line within %s; stopped it", childStartTimeout)
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
	u, err := url.Parse(strings.TrimSpace(addr))
	if err != nil || u.Host == "" {
		c.stop()
		return nil, fmt.Errorf("the app printed a ready line without an address: %q", addr)
	}
	c.url = u
	if err := c.waitHealthy(ctx, timeout.C); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// waitHealthy polls the child's /healthz until it answers 200.
func (c *devChild) waitHealthy(ctx context.Context, timeout <-chan time.Time) error {
	client := &http.Client{Timeout: 2 * time.Second}
	health := c.url.JoinPath("/healthz").String()
	for {
		resp, err := client.Get(health)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-c.exited:
			return fmt.Errorf("the app exited before it was ready (%v); see its output above", c.exitStatus())
		case <-timeout:
			return fmt.Errorf("the app's %s did not answer within %s; stopped it", health, childStartTimeout)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop shuts the child down gracefully: its standard input closes and it
// gets SIGTERM, so runs in flight finish or are recorded as cancelled and
// the store is closed. After childStopTimeout it is killed.
func (c *devChild) stop() {
	_ = c.stdin.Close()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = c.cmd.Process.Kill() // no SIGTERM on this system
	}
	select {
	case <-c.exited:
	case <-time.After(childStopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.exited
	}
}

// exitStatus says how the child exited; valid after exited.
func (c *devChild) exitStatus() string {
	if c.err == nil {
		return "exit status 0"
	}
	return c.err.Error()
}
