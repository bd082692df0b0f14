// Package pgtest starts throwaway Postgres clusters for tests and
// benchmarks: initdb into a temporary folder, a postgres server on a
// loopback port with its unix socket in that folder, and everything
// removed on Stop. It needs the Postgres server binaries (Debian's
// postgresql package puts them in /usr/lib/postgresql/N/bin).
//
// Postgres refuses to run as root; when this process is root the server
// runs as the user "nobody", and the cluster's folder is handed to it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv, when set, turns a missing Postgres into a test failure
// instead of a skip. CI sets it.
const RequireEnv = "DAWN_REQUIRE_POSTGRES"

// binGlob is where Debian's postgresql package installs the server.
const binGlob = "/usr/lib/postgresql/*/bin"

// BinDir returns the folder of the newest installed Postgres server
// binaries (initdb, postgres), or an error saying where it looked.
func BinDir() (string, error) {
	if dir := os.Getenv("DAWN_POSTGRES_BIN"); dir != "" {
		return dir, nil
	}
	dirs, _ := filepath.Glob(binGlob)
	var found []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", fmt.Errorf("no Postgres server binaries (initdb, postgres) in %s or on PATH; install Debian's postgresql package", binGlob)
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) < version(found[j]) })
	return found[len(found)-1], nil
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Options tune a cluster.
type Options struct {
	// Durable keeps fsync on, as a production server has it; tests leave
	// it off, since they never crash the machine.
	Durable bool
}

// Cluster is a running throwaway Postgres server.
type Cluster struct {
	// DSN is the URL of the "postgres" database, as the superuser
	// "postgres" (trust authentication on loopback).
	DSN  string
	Port int
	Dir  string

	cmd  *exec.Cmd
	exit chan struct{}
	once sync.Once
	dbs  atomic.Int64
}

// Start initialises and starts a cluster in a new temporary folder.
func Start(o Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	sweep()
	dir, err := os.MkdirTemp("", "dawn-pg-")
	if err != nil {
		return nil, err
	}
	// The owner file lets a later Start stop this cluster should this
	// process be killed before Stop.
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, exit: make(chan struct{})}
	if err := c.start(bin, o); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// ownerFile, in a cluster's folder, holds the pid of the process that
// started it.
const ownerFile = "owner.pid"

// sweep stops and removes the clusters of processes that died without
// stopping them (a test binary killed at its timeout, say): their server
// runs on in its own process group.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "dawn-pg-*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or still being set up
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || owner <= 0 || syscall.Kill(owner, 0) != syscall.ESRCH {
			continue // its owner lives
		}
		if pidFile, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(pidFile), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGQUIT)
				for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
		_ = os.RemoveAll(dir)
	}
}

func (c *Cluster) start(bin string, o Options) error {
	cred, err := serverUser()
	if err != nil {
		return err
	}
	data, sock := filepath.Join(c.Dir, "data"), filepath.Join(c.Dir, "sock")
	for _, d := range []string{data, sock} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
		if cred != nil {
			// The server's user owns its folders; the one above them
			// must let it in.
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
	}
	if cred != nil {
		if err := os.Chmod(c.Dir, 0o755); err != nil {
			return err
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = c.Dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// Picking a free port and binding it are not one step: another
	// process may take it in between, so a failed start tries again.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return err
		}
		if lastErr = c.run(bin, data, port, cred, o); lastErr == nil {
			return nil
		}
	}
	return lastErr
}

// run starts the server on port and waits until it takes connections.
func (c *Cluster) run(bin, data string, port int, cred *syscall.Credential, o Options) error {
	fsync := "off"
	if o.Durable {
		fsync = "on"
	}
	logPath := filepath.Join(c.Dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+filepath.Join(c.Dir, "sock"), "-c", "fsync="+fsync,
		"-c", "max_connections=200", "-c", "shared_buffers=64MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = c.Dir
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exit := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exit) }()
	c.cmd, c.exit, c.Port = cmd, exit, port
	c.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.DSN)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return nil
		}
		select {
		case <-exit:
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("postgres exited on start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not take connections within 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serverUser returns the credential to run the server with: nil when this
// process is not root, else the user "nobody".
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return nil, fmt.Errorf("postgres cannot run as root, and there is no user \"nobody\" to run it as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// NewDatabase creates an empty database and returns its URL.
func (c *Cluster) NewDatabase() (string, error) {
	name := fmt.Sprintf("dawn_%d", c.dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.DSN)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return strings.Replace(c.DSN, "/postgres?", "/"+name+"?", 1), nil
}

// Stop stops the server at once and removes its folder. Calling it again
// is a no-op.
func (c *Cluster) Stop() {
	c.once.Do(func() {
		if c.cmd != nil && c.cmd.Process != nil {
			// SIGQUIT: immediate shutdown; nothing here needs keeping.
			_ = c.cmd.Process.Signal(syscall.SIGQUIT)
			select {
			case <-c.exit:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
				<-c.exit
			}
		}
		_ = os.RemoveAll(c.Dir)
	})
}

// shared is the cluster of this test process, started on first use.
var shared struct {
	sync.Mutex
	c   *Cluster
	err error
}

// Database returns the URL of a new, empty database on the test process's
// shared cluster, starting it on first use. Without the Postgres binaries
// the test is skipped, or fails when DAWN_REQUIRE_POSTGRES is set. The
// cluster lives until StopShared, which the package's TestMain calls.
func Database(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	dsn, err := c.NewDatabase()
	if err != nil {
		t.Fatalf("create a test database: %v", err)
	}
	return dsn
}

// Shared returns the test process's shared cluster (see Database).
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if _, err := BinDir(); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set, but: %v", RequireEnv, err)
		}
		t.Skipf("skipping the Postgres test: %v (set %s to make this a failure)", err, RequireEnv)
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil && shared.err == nil {
		shared.c, shared.err = Start(Options{})
	}
	if shared.err != nil {
		t.Fatalf("start a throwaway Postgres: %v", shared.err)
	}
	return shared.c
}

// StopShared stops the shared cluster, if one was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.c != nil {
		shared.c.Stop()
		shared.c = nil
	}
	shared.err = errors.New("pgtest: the shared cluster was stopped")
}
