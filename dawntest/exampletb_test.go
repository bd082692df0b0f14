package dawntest_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
)

// exampleTB is the testing.TB of an Example function, which gets none:
// enough of one for New and Run. A failure panics, which fails the example.
type exampleTB struct {
	testing.TB // not set: a method it does not define panics
	ctx        context.Context
	cancel     context.CancelFunc
	cleanups   []func()
}

// exampleT returns a testing.TB for an example, and the function that ends
// it, running its cleanups.
func exampleT() (testing.TB, func()) {
	t := &exampleTB{}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, func() {
		t.cancel()
		for _, f := range slices.Backward(t.cleanups) {
			f()
		}
	}
}

func (t *exampleTB) Helper()                  {}
func (t *exampleTB) Context() context.Context { return t.ctx }
func (t *exampleTB) Cleanup(f func())         { t.cleanups = append(t.cleanups, f) }
func (t *exampleTB) Fatal(args ...any)        { panic(fmt.Sprint(args...)) }
func (t *exampleTB) Fatalf(f string, a ...any) {
	panic(fmt.Sprintf(f, a...))
}
func (t *exampleTB) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (t *exampleTB) Logf(string, ...any)       {}

func (t *exampleTB) TempDir() string {
	dir, err := os.MkdirTemp("", "dawntest-example-")
	if err != nil {
		panic(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
