// Package routeprompt renders an agent.md body as a Go text/template with
// the route's params and state: {{ .Params.tenant }}, {{ .State.topic }}. A
// body without "{{" is used verbatim.
package routeprompt
