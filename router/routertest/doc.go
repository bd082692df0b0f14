// Package routertest writes generated app folders for tests and benchmarks
// of packages that discover routes, router's own included.
package routertest
