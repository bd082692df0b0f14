package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/dawn-go/dawn/client"
	"github.com/dawn-go/dawn/dawntest"
)

// streamAnswer runs route on thread with text, writes the answer to w as
// it streams, and picks the run up again when the connection drops.
func streamAnswer(ctx context.Context, c *client.Client, thread, route, text string, w io.Writer) error {
	s, err := c.Stream(ctx, thread, client.Run{Route: route, Input: client.UserInput(text)})
	if err != nil {
		return err // an *client.APIError for an answer of the API
	}
	defer func() { s.Close() }()
	for {
		e, err := s.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil // the done event came: the run ended
		case errors.Is(err, io.ErrUnexpectedEOF):
			again, err := c.Rejoin(ctx, s)
			if err != nil {
				return err
			}
			s.Close()
			s = again
			continue
		case err != nil:
			return err
		}
		if e.Type == client.EventChunk {
			var chunk client.ChunkEvent
			if err := json.Unmarshal(e.Data, &chunk); err != nil {
				return err
			}
			fmt.Fprint(w, chunk)
		}
	}
}

// A client of a server that dawn dev or dawn start serves streams a run's
// answer.
func Example() {
	c, err := client.New("http://127.0.0.1:3000") // the address the server printed
	if err != nil {
		log.Fatal(err)
	}
	if err := streamAnswer(context.Background(), c, "thread-1", "/support/acme", "My invoice is wrong", os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// TestStreamAnswer runs the example's streamAnswer against a server.
func TestStreamAnswer(t *testing.T) {
	c := serve(t, dawntest.Script().Reply("Your invoice is fixed."))
	var out strings.Builder
	if err := streamAnswer(context.Background(), c, "t1", "/support/acme", "My invoice is wrong", &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Your invoice is fixed." {
		t.Errorf("streamed %q", out.String())
	}
}
