// Command authapp is a Dawn app that authenticates requests with its own
// sessions (dawn.WithAuth) and whose tool greets the caller by name.
package main

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/dawn-go/dawn"
)

// sessions maps the app's session tokens to users; a real app looks them
// up in its own database.
var sessions = map[string]string{"s-ada": "ada@example.com", "s-bob": "bob@example.com"}

// authenticate names the user of a request's session token.
func authenticate(r *http.Request) (dawn.Identity, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	user, known := sessions[token]
	if !ok || !known {
		return dawn.Identity{}, errors.New("unknown session: sign in again")
	}
	return dawn.Identity{User: user}, nil
}

type greetIn struct {
	Name string `json:"name"`
}

// greet answers with the name it is given and the user who asked.
func greet(ctx context.Context, in greetIn) (string, error) {
	who, ok := dawn.IdentityFrom(ctx)
	if !ok {
		return "", errors.New("no caller: the server has no authentication")
	}
	return "Welcome, " + in.Name + " (asked by " + who.User + ")", nil
}

func main() {
	dawn.Main(
		dawn.WithAuth(authenticate),
		dawn.Tool("greet", "Greet someone by name.", greet),
	)
}
