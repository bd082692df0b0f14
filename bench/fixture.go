package main

import _ "embed"

// aimockFixture is the workload's model: for "Help me with my account" with
// no tool result yet it calls writeTodos with 4 todos (first in progress);
// with a tool result it answers one short sentence.
//
//go:embed fixtures/aimock.json
var aimockFixture []byte
