// Package contextwindow is the context capability: it keeps a long
// thread's model requests under a budget. A route whose agent.md (or the
// app's dawn.yaml) sets context: gets compaction, which replaces older
// turns by a summary before a request would exceed max_input_tokens
// (saved as a step, in the compaction state field; the thread keeps every
// message), and tool-output offload, which stores an output over
// tool_output_max_bytes with the thread and shows the model a preview and
// an id that readToolOutput pages through.
//
// It imports the capability API and no server, store or model code.
package contextwindow
