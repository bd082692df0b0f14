// Package router owns finding route folders under an app folder, parsing
// agent.md, turning folder paths into route ids and patterns, and matching a
// request path to the most specific route.
package router
