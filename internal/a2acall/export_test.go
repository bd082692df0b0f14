package a2acall

// SetMaxEvents sets the bound on a call's events for a test and returns
// what puts it back.
func SetMaxEvents(n int) func() {
	old := maxEvents
	maxEvents = n
	return func() { maxEvents = old }
}
