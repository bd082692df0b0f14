// Package server is Dawn's HTTP API on echo: health, routes, threads, runs
// (wait and SSE stream), cancel, and JSON errors of the form
// {"error":{"kind":"…","message":"…","details":{"code":"…"}}}. A run
// request that names assistant_id instead of route speaks the LangGraph
// Agent Server dialect (langgraph*.go), so @langchain/langgraph-sdk works
// unchanged: interrupts included (langgraph_interrupts.go), and its errors
// carry LangGraph's "detail" too.
//
// It owns HTTP only; runs are the runner's business.
package server
