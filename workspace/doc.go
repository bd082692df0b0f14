// Package workspace is the workspace capability: a route whose agent.md
// says workspace: gets the file tools readFile, writeFile, editFile,
// listDir and glob, over a virtual file tree kept in the thread's state
// (workspace: thread) or over a real folder (workspace: DIR) that every
// path is resolved inside with os.Root. Writes to paths matching the
// route's approve globs park the run with a "path" interrupt.
//
// It serves GET /threads/:id/files and /threads/:id/files/*path. It
// imports the capability API and no server, store or model code.
package workspace
