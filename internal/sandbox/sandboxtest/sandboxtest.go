// Package sandboxtest helps tests of the sandbox providers: it finds out
// whether this host can run each provider, failing the test where CI
// requires it (DAWN_REQUIRE_BWRAP=1, DAWN_REQUIRE_DOCKER=1) and skipping
// it otherwise, and builds the docker test image offline, FROM scratch
// with the host's static busybox.
package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/dawn-go/dawn/internal/sandbox"
	"github.com/dawn-go/dawn/internal/sandbox/bwrap"
)

// Environment variables that turn a missing provider into a failure.
const (
	RequireBwrap  = "DAWN_REQUIRE_BWRAP"
	RequireDocker = "DAWN_REQUIRE_DOCKER"
)

// Image is the tag of the test image.
const Image = "dawn-sandbox-test:busybox"

// Busybox is the static busybox the test image is built from (Debian's
// busybox-static).
const Busybox = "/bin/busybox"

// unavailable fails t when env requires the provider, else skips it.
func unavailable(t testing.TB, env, what string, err error) {
	t.Helper()
	if os.Getenv(env) == "1" {
		t.Fatalf("%s is required here (%s=1) but unavailable: %v", what, env, err)
	}
	t.Skipf("%s unavailable (set %s=1 to make this a failure): %v", what, env, err)
}

// Bwrap checks that the local provider runs here with s.
func Bwrap(t testing.TB) {
	t.Helper()
	p, err := bwrap.New(sandbox.Settings{Resources: sandbox.Resources{MemoryMB: 256, Timeout: 10 * time.Second, Pids: 64, DiskMB: 16}})
	if err == nil {
		err = p.Preflight(context.Background())
	}
	if err != nil {
		unavailable(t, RequireBwrap, "bubblewrap", err)
	}
}

var (
	buildOnce sync.Once
	buildErr  error
)

// Docker checks that dockerd answers and builds the test image, once per
// test binary.
func Docker(t testing.TB) {
	t.Helper()
	buildOnce.Do(func() { buildErr = buildImage() })
	if buildErr != nil {
		unavailable(t, RequireDocker, "dockerd", buildErr)
	}
}

// buildImage builds Image from a tar context holding the Dockerfile and
// busybox, through the Engine API's build; it needs no registry.
func buildImage() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("the Docker daemon does not answer: %w", err)
	}
	bb, err := os.ReadFile(Busybox)
	if err != nil {
		return fmt.Errorf("the test image needs a static busybox (Debian: busybox-static): %w", err)
	}
	const dockerfile = "FROM scratch\nCOPY busybox /bin/busybox\n" +
		"RUN [\"/bin/busybox\", \"--install\", \"-s\", \"/bin\"]\n" +
		"RUN [\"/bin/busybox\", \"mkdir\", \"-p\", \"-m\", \"1777\", \"/tmp\"]\n" +
		"RUN [\"/bin/busybox\", \"mkdir\", \"-p\", \"/run\", \"/workspace\", \"/etc\", \"/usr/bin\"]\n" +
		"RUN [\"/bin/busybox\", \"sh\", \"-c\", \"echo 'root:x:0:0:root:/root:/bin/sh' > /etc/passwd; echo 'root:$6$secret:19000:0:99999:7:::' > /etc/shadow; chmod 0600 /etc/shadow\"]\n"
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"busybox", 0o755, bb}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{Image}, Remove: true, ForceRemove: true})
	if err != nil {
		return fmt.Errorf("building the test image: %w", err)
	}
	defer res.Body.Close()
	return buildOutcome(res.Body)
}

// buildOutcome reads the build's JSON messages for an error.
func buildOutcome(r io.Reader) error {
	dec := json.NewDecoder(r)
	var log bytes.Buffer
	for {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("reading the build output: %w", err)
		}
		log.WriteString(m.Stream)
		if m.Error != "" {
			return fmt.Errorf("building the test image: %s\n%s", m.Error, log.String())
		}
	}
}

// DockerSettings are settings for the test image.
func DockerSettings() sandbox.Settings {
	return sandbox.Settings{Provider: "docker", Image: Image}
}

// ContainersWith counts the running sandbox containers whose workspace
// holds a file named name, running test -e in each through the Engine
// API (the workspace is a tmpfs, which the archive API does not see).
func ContainersWith(t testing.TB, name string) int {
	t.Helper()
	return len(containersWith(t, name, false))
}

// RemoveContainersWith removes the sandbox containers whose workspace
// holds a file named name, as a crash or an operator would.
func RemoveContainersWith(t testing.TB, name string) int {
	t.Helper()
	return len(containersWith(t, name, true))
}

func containersWith(t testing.TB, name string, remove bool) []string {
	t.Helper()
	ctx := context.Background()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", "dawn.sandbox")})
	if err != nil {
		t.Fatal(err)
	}
	var hit []string
	for _, c := range list.Items {
		ex, err := cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{Cmd: []string{"test", "-e", sandbox.Workdir + "/" + name}})
		if err != nil {
			continue // the container is going away
		}
		if _, err := cli.ExecStart(ctx, ex.ID, client.ExecStartOptions{Detach: true}); err != nil {
			continue
		}
		for range 100 {
			ins, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
			if err != nil {
				break
			}
			if !ins.Running {
				if ins.ExitCode == 0 {
					hit = append(hit, c.ID)
				}
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, id := range hit {
		if remove {
			if _, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return hit
}

// RemoveAll removes every sandbox container, for a test's cleanup: the
// boxes of a test's servers outlive them otherwise until their idle
// timeout.
func RemoveAll(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return
	}
	defer cli.Close()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", "dawn.sandbox")})
	if err != nil {
		return
	}
	for _, c := range list.Items {
		_, _ = cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
	}
}
