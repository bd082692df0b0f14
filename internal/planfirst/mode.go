package planfirst

import (
	"fmt"
	"strings"
)

// Mode says when a run plans first.
type Mode string

// Modes. The zero value "" means Off.
const (
	// Off never plans first (unless a run asks for it).
	Off Mode = "off"
	// Auto plans first when the task's ComplexityScore reaches the
	// threshold.
	Auto Mode = "auto"
	// Always plans first for every task.
	Always Mode = "always"
)

// DefaultThreshold is the ComplexityScore at which Auto plans first.
const DefaultThreshold = 6

// ParseMode reads a mode from configuration (dawn.yaml, plan.md front
// matter, a run option). It accepts off, auto and always in any case,
// "plan-first" as another name for always (for `mode: plan-first` in
// plan.md), and the empty string as Off.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "off":
		return Off, nil
	case "auto":
		return Auto, nil
	case "always", "plan-first":
		return Always, nil
	}
	return "", fmt.Errorf("plan-first mode %q is not valid; use off, auto or always", s)
}

// ShouldPlan reports whether a task plans first under mode: never for Off
// (and ""), always for Always, and for Auto when ComplexityScore(task) is at
// least threshold. A threshold of 0 or less means DefaultThreshold; use
// Always to plan every task.
func ShouldPlan(mode Mode, threshold int, task string) bool {
	switch mode {
	case Always:
		return true
	case Auto:
		if threshold <= 0 {
			threshold = DefaultThreshold
		}
		return ComplexityScore(task) >= threshold
	}
	return false
}
