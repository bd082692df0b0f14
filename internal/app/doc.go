// Package app loads a Dawn app folder: its dawn.yaml settings, its route tree
// and every route prepared with its capabilities, as one immutable snapshot
// that the server swaps atomically on reload. The caller hands it the app's
// capability markers.
package app
