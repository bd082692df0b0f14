// Package watch reports changes under a folder tree, recursively and with
// bursts debounced, using fsnotify. New folders are watched as they appear;
// editor temporary files, SQLite side files and the .dawn folder are ignored.
package watch
