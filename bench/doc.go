// Command bench is Dawn's load tool: one command starts aimock and the stock
// dawn binary on loopback, runs the performance issue's workload and prints
// every figure against its target; with --soak it checks streams under load
// instead.
package main
