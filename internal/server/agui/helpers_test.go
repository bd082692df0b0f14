package agui_test

import "github.com/dawn-go/dawn/internal/apptest"

// The helpers these tests share with the core's (see apptest).
var (
	post             = apptest.PostJSON
	readSSE          = apptest.ReadSSE
	runBody          = apptest.RunBody
	writeApp         = apptest.WriteApp
	supportApp       = apptest.SupportApp
	enforcedApp      = apptest.EnforcedApp
	fourTodos        = apptest.FourTodos
	getJSON          = apptest.GetJSON
	decodeErr        = apptest.DecodeError
	lastUser         = apptest.LastUser
	fuzzSupportFiles = apptest.FuzzSupportFiles
	writeFuzzApp     = apptest.WriteApp
	stackTrace       = apptest.StackTrace
	serveFuzz        = apptest.ServeRecorded
	checkErrorBody   = apptest.CheckErrorBody
	deleteThread     = apptest.DeleteThread
)

type apiErr = apptest.APIError
