package server_test

import (
	"bytes"

	"github.com/dawn-go/dawn/internal/apptest"
)

// post sends a JSON body and returns the response.
var post = apptest.PostJSON

// readSSE reads an SSE response to its end.
var readSSE = apptest.ReadSSE

var _ = bytes.NewReader

// The helpers these tests share with the wires' tests (see apptest).
var (
	writeApp   = apptest.WriteApp
	supportApp = apptest.SupportApp
	getJSON    = apptest.GetJSON
	decodeErr  = apptest.DecodeError
	runBody    = apptest.RunBody
)

type apiErr = apptest.APIError
