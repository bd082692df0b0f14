package stream

import "encoding/json"

// appendJSONString appends s to dst as a JSON string literal on one line;
// invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst, s []byte) []byte {
	b, _ := json.Marshal(string(s)) // a string always encodes
	return append(dst, b...)
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
