package deploy

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/template"
	"time"

	"github.com/moby/moby/client"
)

// ImageOptions say what BuildImage puts in the image.
type ImageOptions struct {
	// Tag names the image, such as "shop:latest".
	Tag string
	// Binary is a static binary of the app (its main package, or dawn for
	// an app without Go code), built on the host.
	Binary string
	// AppDir is the app folder.
	AppDir string
	// CACerts is a CA bundle copied to /etc/ssl/certs, so the app reaches
	// model providers over TLS; "" copies none.
	CACerts string
	// Grace is how long runs in flight may take to finish on SIGTERM.
	Grace time.Duration
	// Log receives the build's output; nil discards it.
	Log io.Writer
}

// imageDockerfile is the Dockerfile of BuildImage's context: the binary
// and the app folder on scratch, which needs no registry, as the user of
// the multi-stage Dockerfile and with its entry point.
const imageDockerfile = `FROM scratch
COPY dawn-app /usr/local/bin/dawn-app
COPY app /srv/app
COPY --chown=10001:10001 data /data
COPY --chown=10001:10001 tmp /tmp
[[- if .CACerts]]
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
[[- end]]
USER 10001:10001
ENV DAWN_STORE=/data/dawn.db
VOLUME /data
EXPOSE 8000
ENTRYPOINT ["/usr/local/bin/dawn-app", "start", "--app", "/srv/app", "--host", "0.0.0.0", "--port", "8000"]
CMD ["--grace", "[[.Grace]]"]
`

// buildTimeout bounds one image build.
const buildTimeout = 10 * time.Minute

// BuildImage builds an image from o.Binary on scratch through the Docker
// Engine API (DOCKER_HOST, else the local socket): no base image is
// pulled, so it works with no registry. It returns the image id.
func BuildImage(ctx context.Context, o ImageOptions) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	if o.Log == nil {
		o.Log = io.Discard
	}
	tarball, err := imageContext(o)
	if err != nil {
		return "", err
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return "", fmt.Errorf("docker: the Docker Engine at %s does not answer (%v); start dockerd or set DOCKER_HOST", cli.DaemonHost(), err)
	}
	resp, err := cli.ImageBuild(ctx, bytes.NewReader(tarball), client.ImageBuildOptions{
		Tags: []string{o.Tag}, Dockerfile: "Dockerfile", Remove: true, ForceRemove: true,
	})
	if err != nil {
		return "", fmt.Errorf("docker build of %s: %w", o.Tag, err)
	}
	defer resp.Body.Close()
	return readBuild(resp.Body, o.Log, o.Tag)
}

// readBuild reads the Engine's build messages, writing their text to log,
// and returns the image id or the build's error.
func readBuild(body io.Reader, log io.Writer, tag string) (string, error) {
	dec := json.NewDecoder(body)
	id := ""
	for {
		var msg struct {
			Stream      string `json:"stream"`
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
			Aux struct {
				ID string `json:"ID"`
			} `json:"aux"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("docker build of %s: reading the engine's answer: %w", tag, err)
		}
		if msg.Error != "" {
			return "", fmt.Errorf("docker build of %s: %s", tag, msg.Error)
		}
		if msg.Aux.ID != "" {
			id = msg.Aux.ID
		}
		fmt.Fprint(log, msg.Stream)
	}
	if id == "" {
		return "", fmt.Errorf("docker build of %s: the engine named no image", tag)
	}
	return id, nil
}

// imageContext is the tar of BuildImage's build context.
func imageContext(o ImageOptions) ([]byte, error) {
	var df bytes.Buffer
	tmpl := template.Must(template.New("Dockerfile").Delims("[[", "]]").Parse(imageDockerfile))
	if err := tmpl.Execute(&df, map[string]any{"CACerts": o.CACerts != "", "Grace": fmt.Sprintf("%ds", int((o.Grace+time.Second-1)/time.Second))}); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: time.Unix(0, 0)})
	}
	if err := add("Dockerfile", 0o644, df.Bytes()); err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, fmt.Errorf("the app's binary: %w", err)
	}
	if err := add("dawn-app", 0o755, bin); err != nil {
		return nil, err
	}
	if o.CACerts != "" {
		certs, err := os.ReadFile(o.CACerts)
		if err != nil {
			return nil, fmt.Errorf("CA certificates: %w", err)
		}
		if err := add("ca-certificates.crt", 0o644, certs); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"data", "tmp", "app"} {
		if err := dir(d); err != nil {
			return nil, err
		}
	}
	if err := addApp(tw, o.AppDir); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addApp adds the app folder under app/, without what the image never
// needs (.dawn, .git, the deploy files).
func addApp(tw *tar.Writer, appDir string) error {
	root := os.DirFS(appDir)
	return fs.WalkDir(root, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if e.IsDir() && (e.Name() == ".dawn" || e.Name() == ".git" || e.Name() == "deploy") {
			return fs.SkipDir
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		name := "app/" + filepath.ToSlash(p)
		switch {
		case e.IsDir():
			return tw.WriteHeader(&tar.Header{Name: name + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: info.ModTime()})
		case !info.Mode().IsRegular():
			return nil // sockets, links: not part of an app
		}
		data, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: info.ModTime()}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
}

// ImageTag is the tag dawn build --image gives the image of name when no
// tag is asked for.
func ImageTag(name string) string { return name + ":latest" }
