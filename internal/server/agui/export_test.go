package agui

// SetAGUIAbandonHook makes f run when an AG-UI client has left, just
// before its run is cancelled, until the returned function is called.
func SetAGUIAbandonHook(f func()) (restore func()) {
	testHookAGUIAbandon = f
	return func() { testHookAGUIAbandon = nil }
}
