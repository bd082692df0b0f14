//go:build !unix

package workspace

import "errors"

func mkfifo(string) error { return errors.New("not on this system") }
