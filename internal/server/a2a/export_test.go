package a2a

import "time"

// SetKeepAlive sets how often an idle stream gets a keep-alive comment,
// until the returned function puts it back.
func SetKeepAlive(d time.Duration) func() {
	old := keepAliveEvery.Swap(int64(d))
	return func() { keepAliveEvery.Store(old) }
}
