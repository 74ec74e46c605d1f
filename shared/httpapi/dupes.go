package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// scope is an object or array being read by duplicateKey.
type scope struct {
	object  bool
	keys    map[string]bool
	path    string
	index   int    // arrays: the next element's index
	key     string // objects: the key whose value comes next
	wantKey bool   // objects: the next string token is a key
}

// duplicateKey finds an object key that appears twice in one object anywhere in
// body and answers its path. encoding/json keeps the last value silently, so
// `{"name": "a", "name": "b"}` would say two things and mean one.
func duplicateKey(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var stack []*scope
	top := func() *scope {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	// next is the path of the value about to be read, and marks it read.
	next := func() string {
		s := top()
		switch {
		case s == nil:
			return ""
		case s.object:
			s.wantKey = true
			return join(s.path, s.key)
		}
		p := join(s.path, strconv.Itoa(s.index))
		s.index++
		return p
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // malformed input is the decoder's to report
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &scope{object: true, keys: map[string]bool{}, path: next(), wantKey: true})
			case '[':
				stack = append(stack, &scope{path: next()})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if s := top(); s != nil && s.object && s.wantKey {
				if s.keys[t] {
					return join(s.path, t), true
				}
				s.keys[t], s.key, s.wantKey = true, t, false
				continue
			}
			next()
		default:
			next()
		}
		if len(stack) == 0 {
			return "", false
		}
	}
}
