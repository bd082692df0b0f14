//go:build !unix

package store

// localProcess returns "": pids are not checked here, and the runs of an
// owner that is gone are recovered once its lease expires.
func localProcess(string) (hostKey, procStart string) { return "", "" }

func processGone(int, string) bool { return false }
