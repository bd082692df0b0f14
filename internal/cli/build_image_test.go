package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// dockerClient returns a client of the local Docker Engine. Without one
// the test fails when DAWN_REQUIRE_DOCKER=1 (CI starts dockerd), else it
// is skipped, saying why.
func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.Ping(ctx, client.PingOptions{})
	}
	if err != nil {
		if os.Getenv("DAWN_REQUIRE_DOCKER") == "1" {
			t.Fatalf("DAWN_REQUIRE_DOCKER=1 but the Docker Engine does not answer: %v", err)
		}
		t.Skipf("no Docker Engine (%v); set DAWN_REQUIRE_DOCKER=1 to make this a failure", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// TestBuildImageServes: dawn build --image of a dawn new app builds an
// image on scratch through the Engine API (no registry), and a container
// of it, published on 127.0.0.1 only, answers /healthz and a run of
// /assistant on the offline model that calls the app's Go tool.
func TestBuildImageServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new app and an image")
	}
	cli := dockerClient(t)
	dir := newApp(t)
	tag := fmt.Sprintf("dawn-front-test:%d", time.Now().UnixNano())
	code, stdout, stderr := buildApp("--app", filepath.Join(dir, "app"), "--image", "--tag", tag)
	if code != ExitOK {
		t.Fatalf("dawn build --image exited %d:\n%s%s", code, stdout, stderr)
	}
	ctx := context.Background()
	t.Cleanup(func() { cli.ImageRemove(ctx, tag, client.ImageRemoveOptions{Force: true, PruneChildren: true}) })
	if !strings.Contains(stdout, "image "+tag) {
		t.Errorf("dawn build --image did not name the image: %s", stdout)
	}

	port := network.MustParsePort("8000/tcp")
	loopback := netip.MustParseAddr("127.0.0.1")
	created, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: tag, Env: []string{"DAWN_API_KEY=test-key"}, ExposedPorts: network.PortSet{port: {}}},
		HostConfig: &container.HostConfig{PortBindings: network.PortMap{port: {{HostIP: loopback, HostPort: ""}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.ContainerRemove(ctx, created.ID, client.ContainerRemoveOptions{Force: true}) })
	if _, err := cli.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := cli.ContainerInspect(ctx, created.ID, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bound := info.Container.NetworkSettings.Ports[port]
	if len(bound) == 0 || bound[0].HostIP != loopback {
		t.Fatalf("the container's port is bound to %+v, want 127.0.0.1", bound)
	}
	base := "http://127.0.0.1:" + bound[0].HostPort
	if err := waitHealthy(base); err != nil {
		logs, _ := cli.ContainerLogs(ctx, created.ID, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true})
		var text []byte
		if logs != nil {
			text, _ = io.ReadAll(io.LimitReader(logs, 64<<10))
		}
		t.Fatalf("%v; the container's logs:\n%s", err, text)
	}
	body := `{"route":"/assistant","input":{"messages":[{"role":"user","content":"Count the words of: hello brave new world"}]}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/threads/demo/runs/wait", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(answer), "Offline model") || !strings.Contains(string(answer), "countWords") {
		t.Errorf("runs/wait answered %d: %s", resp.StatusCode, answer)
	}
}

// waitHealthy waits up to 30 seconds for base/healthz to answer 200.
func waitHealthy(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s/healthz did not answer 200 in 30s: %v", base, last)
}
