// Package devserver is dawn dev's machinery: reloading an app folder in a
// running server as it is edited (Reloader), and, for an app with Go code,
// building its main package, running it as a dev child and proxying the dev
// port to it, rebuilding and restarting on Go changes (RunGo).
//
// cli owns the commands and their flags; this package owns no flags.
package devserver
