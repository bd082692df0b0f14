// Package sandbox is the sandbox capability: when dawn.yaml configures
// sandbox:, every route with workspace: thread gets runBash, which runs a
// shell command in the thread's own isolated box (bubblewrap or a docker
// container, behind internal/sandbox's provider contract) over the same
// files the workspace tools read and write. The files live in the
// thread's state in the store; they are copied into a box when it is
// started and out after every command, so they outlive any box.
//
// It imports the capability API, the workspace capability and the
// providers; no server, store or model code.
package sandbox
