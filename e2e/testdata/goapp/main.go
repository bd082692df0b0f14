// Command goapp is a Dawn app binary for the e2e tests of tool-call
// delivery: dawn.Main with Go tools. charge and refresh append "tool key"
// as a line to the file $GOAPP_LOG, so a test can count the calls that
// ran; the first call of a key then never returns (the test kills the
// server meanwhile), a later one returns "applied key (run N)". refresh
// is declared idempotent, charge is not. stall never returns and ignores
// its context.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/dawn-go/dawn"
)

type keyIn struct {
	Key string `json:"key" jsonschema:"what to apply"`
}

var mu sync.Mutex

// record appends "tool key" to $GOAPP_LOG and returns how many lines for
// key the file now holds.
func record(tool, key string) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	path := os.Getenv("GOAPP_LOG")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintln(f, tool, key); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(data), tool+" "+key+"\n"), nil
}

func apply(tool string) func(context.Context, keyIn) (string, error) {
	return func(_ context.Context, in keyIn) (string, error) {
		n, err := record(tool, in.Key)
		if err != nil {
			return "", err
		}
		if n == 1 {
			select {} // the first run never returns
		}
		return fmt.Sprintf("applied %s (run %d)", in.Key, n), nil
	}
}

func main() {
	dawn.Main(
		dawn.Tool("charge", "Charge a card.", apply("charge")),
		dawn.Idempotent(dawn.Tool("refresh", "Refresh a cache; safe to repeat.", apply("refresh"))),
		dawn.Tool("stall", "Never returns.", func(context.Context, struct{}) (string, error) {
			select {}
		}),
	)
}
