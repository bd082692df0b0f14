// Package routertest writes generated app folders for tests and benchmarks
// of packages that discover routes.
//
// It imports only the standard library; it must not import router or any
// other Dawn package, so any package's tests may use it.
package routertest
