// Package reliability holds only tests: the real dawn binary killed with
// SIGKILL mid-run, a soak of concurrent runs and SSE subscribers, limits and
// access control end to end. Nothing may import it; it uses only exported APIs.
package reliability
