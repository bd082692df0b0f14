package stream

import "unicode/utf8"

// maxJSONDepth is the nesting limit of encoding/json, so that
// appendCompactJSON accepts exactly what json.Valid accepts.
const maxJSONDepth = 10000

// appendCompactJSON appends src to dst without insignificant whitespace and
// reports whether src is exactly one valid JSON value. When it is not, the
// returned slice is dst with its length unchanged.
//
// It does the work of json.Valid and json.Compact in one pass and without
// allocating beyond the growth of dst.
func appendCompactJSON(dst, src []byte) ([]byte, bool) {
	c := jsonCompactor{src: src, dst: dst}
	c.skipSpace()
	if !c.value() {
		return dst, false
	}
	c.skipSpace()
	if c.pos != len(src) {
		return dst, false
	}
	return c.dst, true
}

// jsonCompactor is the state of one appendCompactJSON call: a recursive
// descent over RFC 8259's grammar that copies every significant byte.
type jsonCompactor struct {
	src   []byte
	pos   int
	dst   []byte
	depth int
}

// peek returns the next byte, or 0 at the end (0 is never valid where peek
// is used).
func (c *jsonCompactor) peek() byte {
	if c.pos < len(c.src) {
		return c.src[c.pos]
	}
	return 0
}

func (c *jsonCompactor) skipSpace() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *jsonCompactor) value() bool {
	switch b := c.peek(); {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		return c.string()
	case b == '-' || isDigit(b):
		return c.number()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	}
	return false
}

// open consumes the opening byte of an object or array.
func (c *jsonCompactor) open() bool {
	c.depth++
	if c.depth > maxJSONDepth {
		return false
	}
	c.dst = append(c.dst, c.src[c.pos])
	c.pos++
	c.skipSpace()
	return true
}

// closeOrComma consumes the byte after a member or element: a comma (and
// the space after it) or the closing byte. done reports the closing byte.
func (c *jsonCompactor) closeOrComma(closing byte) (done, ok bool) {
	c.skipSpace()
	switch c.peek() {
	case ',':
		c.pos++
		c.dst = append(c.dst, ',')
		c.skipSpace()
		return false, true
	case closing:
		c.pos++
		c.dst = append(c.dst, closing)
		c.depth--
		return true, true
	}
	return false, false
}

func (c *jsonCompactor) object() bool {
	if !c.open() {
		return false
	}
	if c.peek() == '}' {
		c.pos++
		c.dst = append(c.dst, '}')
		c.depth--
		return true
	}
	for {
		if c.peek() != '"' || !c.string() {
			return false
		}
		c.skipSpace()
		if c.peek() != ':' {
			return false
		}
		c.pos++
		c.dst = append(c.dst, ':')
		c.skipSpace()
		if !c.value() {
			return false
		}
		done, ok := c.closeOrComma('}')
		if !ok || done {
			return ok
		}
	}
}

func (c *jsonCompactor) array() bool {
	if !c.open() {
		return false
	}
	if c.peek() == ']' {
		c.pos++
		c.dst = append(c.dst, ']')
		c.depth--
		return true
	}
	for {
		if !c.value() {
			return false
		}
		done, ok := c.closeOrComma(']')
		if !ok || done {
			return ok
		}
	}
}

// string copies a string literal whole: inside one nothing is insignificant.
func (c *jsonCompactor) string() bool {
	start := c.pos
	c.pos++
	for c.pos < len(c.src) {
		switch b := c.src[c.pos]; {
		case b == '"':
			c.pos++
			c.dst = append(c.dst, c.src[start:c.pos]...)
			return true
		case b == '\\':
			if !c.escape() {
				return false
			}
		case b < 0x20:
			return false
		default:
			c.pos++
		}
	}
	return false
}

// escape consumes a backslash escape inside a string.
func (c *jsonCompactor) escape() bool {
	if c.pos+1 >= len(c.src) {
		return false
	}
	switch c.src[c.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return true
	case 'u':
		if c.pos+6 > len(c.src) {
			return false
		}
		for _, h := range c.src[c.pos+2 : c.pos+6] {
			if !isHex(h) {
				return false
			}
		}
		c.pos += 6
		return true
	}
	return false
}

func (c *jsonCompactor) number() bool {
	start := c.pos
	if c.peek() == '-' {
		c.pos++
	}
	switch b := c.peek(); {
	case b == '0':
		c.pos++
	case b >= '1' && b <= '9':
		c.skipDigits()
	default:
		return false
	}
	if c.peek() == '.' {
		c.pos++
		if !isDigit(c.peek()) {
			return false
		}
		c.skipDigits()
	}
	if b := c.peek(); b == 'e' || b == 'E' {
		c.pos++
		if b := c.peek(); b == '+' || b == '-' {
			c.pos++
		}
		if !isDigit(c.peek()) {
			return false
		}
		c.skipDigits()
	}
	c.dst = append(c.dst, c.src[start:c.pos]...)
	return true
}

func (c *jsonCompactor) skipDigits() {
	for c.pos < len(c.src) && isDigit(c.src[c.pos]) {
		c.pos++
	}
}

func (c *jsonCompactor) literal(lit string) bool {
	if len(c.src)-c.pos < len(lit) || string(c.src[c.pos:c.pos+len(lit)]) != lit {
		return false
	}
	c.dst = append(c.dst, lit...)
	c.pos += len(lit)
	return true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHex(b byte) bool {
	return isDigit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

// appendJSONString appends s to dst as a JSON string literal. Control
// characters are escaped and invalid UTF-8 becomes U+FFFD, so the result is
// always valid JSON on one line.
func appendJSONString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
