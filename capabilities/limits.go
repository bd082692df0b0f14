package capabilities

import "context"

// Limits are app-wide bounds (dawn.yaml limits) that capabilities apply to
// what a model sends them. Zero means the capability's default.
type Limits struct {
	// Todos caps the items of one plan update.
	Todos int
	// ItemBytes caps the text of one plan item (and its evidence).
	ItemBytes int
}

type limitsKey struct{}

// WithLimits returns a context that carries l to Marker.Load.
func WithLimits(ctx context.Context, l Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l)
}

// LimitsFrom returns the limits carried by ctx, or the zero Limits.
func LimitsFrom(ctx context.Context) Limits {
	l, _ := ctx.Value(limitsKey{}).(Limits)
	return l
}
