// Command greeter is a Dawn app whose main registers a capability of its
// own module.
package main

import (
	"example.com/greeter/greeting"
	"github.com/dawn-go/dawn"
)

func main() {
	dawn.Main(dawn.WithCapability(greeting.Marker()))
}
