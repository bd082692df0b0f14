// Command dawn is the Dawn for Go CLI: dev, start, routes, check, typegen
// and run. An app with Go tools builds its own copy with dawn.Main.
package main

import (
	"os"

	"github.com/dawn-go/dawn/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], cli.Config{Stock: true})) }
