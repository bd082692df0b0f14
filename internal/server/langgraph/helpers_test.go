package langgraph_test

import "github.com/dawn-go/dawn/internal/apptest"

// The helpers these tests share with the core's (see apptest).
var (
	post       = apptest.PostJSON
	readSSE    = apptest.ReadSSE
	writeApp   = apptest.WriteApp
	supportApp = apptest.SupportApp
	fourTodos  = apptest.FourTodos
	getJSON    = apptest.GetJSON
	decodeErr  = apptest.DecodeError
	runBody    = apptest.RunBody
)
