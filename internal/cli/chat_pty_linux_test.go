//go:build linux

package cli_test

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side the test
// reads and types at, and the terminal side a child gets as its stdio.
func openPTY(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(control.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(control.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	term, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { control.Close(); term.Close() })
	return control, term
}

// TestChatInTerminal: dawn chat on the app folder, run under a real
// pseudo-terminal as a person would: each line typed is a turn, the
// approval is asked and answered at the terminal, the plan is drawn as a
// terminal's live view, and Ctrl-D leaves.
func TestChatInTerminal(t *testing.T) {
	dir := writeChatApp(t)
	control, term := openPTY(t)
	cmd := exec.Command(dawnBinary(t), "chat", "--app", dir)
	cmd.Env = offlineEnv("TERM=xterm", "COLUMNS=100")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term, term, term
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	term.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	screen := &lockedBuffer{}
	go io.Copy(screen, control) // ends when the child's side closes

	waitScreen := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(screen.String(), want) {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the terminal does not show %q:\n%s", want, screen.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	typeLine := func(line string) {
		t.Helper()
		if _, err := control.Write([]byte(line + "\r")); err != nil {
			t.Fatal(err)
		}
	}

	waitScreen("on a new thread")
	waitScreen("> ")
	typeLine("hi")
	waitScreen("Hello from the script.")
	typeLine("save the note")
	waitScreen("approve once / always / deny / edit? ")
	typeLine("once")
	waitScreen("Saved note.txt.")
	typeLine("/plan")
	waitScreen("1. [ ] Take the note")
	control.Write([]byte{4}) // Ctrl-D: the end of the input
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("dawn chat: %v\n%s", err, screen.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("dawn chat did not leave on Ctrl-D:\n%s", screen.String())
	}
	if !threadLine.MatchString(screen.String()) {
		t.Fatalf("the terminal shows no thread id at the end:\n%s", screen.String())
	}
}
