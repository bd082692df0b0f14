// Package tokens counts tokens the way OpenAI's models do, offline: the
// o200k_base encoding (gpt-4o, gpt-4o-mini and later) from BPE tables
// embedded in the binary, so no count ever needs the network. It is for
// measuring (the load tool and tests); the server does not link it.
package tokens

import (
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the encoding Count uses.
const Encoding = "o200k_base"

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

// Count returns the number of o200k_base tokens of text. It panics only if
// the embedded tables cannot be read, which a build that compiles rules out.
func Count(text string) int {
	once.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, err = tiktoken.GetEncoding(Encoding)
	})
	if err != nil {
		panic("tokens: " + err.Error())
	}
	return len(enc.EncodeOrdinary(text))
}
