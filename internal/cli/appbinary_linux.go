package cli

import "syscall"

// appBinaryAttrs make the app's binary get SIGTERM when the dawn that runs
// it dies, even by SIGKILL, so that it never serves on as an orphan
// holding the port.
func appBinaryAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
