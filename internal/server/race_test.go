//go:build race

package server_test

// raceEnabled is true in a -race build, whose stress tests run fewer rounds.
const raceEnabled = true
