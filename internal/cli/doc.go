// Package cli is the dawn command line: dev, start, routes, check, typegen
// and run, built on cobra. cmd/dawn and every app's own binary (through
// dawn.Main) call Run.
//
// It wires the other packages together and holds no domain logic of its own.
package cli
