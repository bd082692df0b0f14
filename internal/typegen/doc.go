// Package typegen owns the code generated for an app's routes: a Go package
// (route ids, params with path builders, tool inputs, state, a typed client),
// TypeScript declarations and JSON Schema files, all byte-for-byte
// deterministic, from a loaded app.App and the types its markers
// contribute. It is internal: it reads the runtime's loaded app, and an
// app author runs it as `dawn typegen`, which is what the docs promise.
//
// Go types follow the JSON Schemas of tool inputs and state fields: objects
// with properties become structs (optional fields get omitempty, optional
// objects are pointers), arrays become slices, open objects become maps,
// enums stay strings with the allowed values in the field's comment, and
// anything else becomes json.RawMessage (unknown in TypeScript).
//
// A route's <slug>.tools.json validates one tool call {"name", "input"}
// with a oneOf over the route's tools; each tool's input schema is under
// $defs by tool name. <slug>.state.json is the object schema of the
// route's state values; fields a capability owns are marked readOnly.
package typegen
