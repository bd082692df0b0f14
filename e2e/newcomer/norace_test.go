//go:build !race

package newcomer

const raceEnabled = false
