// Package router owns finding route folders under an app folder, parsing
// agent.md, turning folder paths into route ids and patterns, and matching a
// request path to the most specific route.
//
// It imports only the standard library and gopkg.in/yaml.v3; it must not
// import capabilities, server, store or model code.
package router
