package runner

import "context"

// ephemeralKey is the context key of WithEphemeralThread.
type ephemeralKey struct{}

// WithEphemeralThread returns ctx for starting (or queueing) a run whose
// thread, when the run creates it, lives only for that run: the store
// marks it ephemeral as it creates it (store.Run.Ephemeral), and any
// server's sweep deletes it once no run is running or queued on it and
// no person must answer it, also when the server that ran it died first.
// The scheduler starts the tick of a cron without a thread so; the wire
// that starts the run needs to know nothing of it.
func WithEphemeralThread(ctx context.Context) context.Context {
	return context.WithValue(ctx, ephemeralKey{}, true)
}

// ephemeralThread reports whether ctx came from WithEphemeralThread.
func ephemeralThread(ctx context.Context) bool {
	v, _ := ctx.Value(ephemeralKey{}).(bool)
	return v
}
