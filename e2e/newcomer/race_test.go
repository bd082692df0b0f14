//go:build race

package newcomer

// raceEnabled: the race pass of .ci/run skips the newcomer path, which
// builds and runs programs of its own (their code is not under the race
// detector) and runs in the plain pass.
const raceEnabled = true
