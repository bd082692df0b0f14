//go:build !linux

package cli

import "syscall"

// appBinaryAttrs sets nothing where the system has no parent-death
// signal: the app's binary stops with the signals dawn passes on.
func appBinaryAttrs() *syscall.SysProcAttr { return nil }
