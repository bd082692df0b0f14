// Package memory is the old name of the standing-instructions package.
//
// Deprecated: use instructions; this package forwards to it so existing
// apps compile. Long-term memory (the memory: key of agent.md) is
// longmemory.
package memory

import (
	"github.com/dawn-go/dawn/capabilities"
	"github.com/dawn-go/dawn/instructions"
)

// Name is instructions.Name.
//
// Deprecated: use instructions.Name.
const Name = instructions.Name

// The files of the capability.
//
// Deprecated: use instructions.RouteFile and instructions.AppFile.
const (
	RouteFile = instructions.RouteFile
	AppFile   = instructions.AppFile
)

// MaxFileSize is instructions.MaxFileSize.
//
// Deprecated: use instructions.MaxFileSize.
const MaxFileSize = instructions.MaxFileSize

// Source is instructions.Source.
//
// Deprecated: use instructions.Source.
type Source = instructions.Source

// Marker returns instructions.Marker().
//
// Deprecated: use instructions.Marker.
func Marker() capabilities.Marker { return instructions.Marker() }

// Render returns instructions.Render(sources).
//
// Deprecated: use instructions.Render.
func Render(sources []Source) string { return instructions.Render(sources) }

// ReadFile returns instructions.ReadFile(path).
//
// Deprecated: use instructions.ReadFile.
func ReadFile(path string) (string, error) { return instructions.ReadFile(path) }
