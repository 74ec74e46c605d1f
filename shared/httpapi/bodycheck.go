package httpapi

import (
	"cmp"
	"encoding"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/gale-rmm/gale/shared/fault"
)

// MaxDepth is how deeply a request body may nest objects and arrays
// (32 levels, docs/decisions.md#validation-and-bodies); deeper is 400
// `Validation failed` naming the path where it went too deep.
const MaxDepth = 32

// MaxItems is how many array elements and map or free-form object members a
// request body may hold in all (struct fields are not counted: a struct has
// only so many). Filling a target costs per element (a []string of 350,000
// empty strings made encoding/json allocate 28 MiB, 350,000 empty lists into
// an interface 36 MiB), so the count bounds what a body may cost once it is
// accepted: at most MaxItems elements keep a 1 MiB body under 10 MiB of
// allocation whatever its shape. The largest list a route takes is an agent's
// software inventory (device.MaxSoftware, 10,000 entries). More is 400
// `Validation failed` naming the list or object where the count ran out.
const MaxItems = 20_000

// checkShape reads body once, left to right, and refuses in the same pass what
// encoding/json would let through or pay too much for:
//   - nesting deeper than MaxDepth (before encoding/json's own scanner sees it);
//   - an object key that appears twice in one object, anywhere in the body
//     (encoding/json keeps the last value silently, so `{"name":"a","name":"b"}`
//     would say two things and mean one);
//   - a key that is no field of the target type, exactly as written: encoding/json
//     folds case ("Status" fills status) and DisallowUnknownFields does not catch it.
//
// Its cost is linear in the body: no path string is built unless it reports an
// error, keys are compared in place, and a struct's keys are remembered as bits.
// Types with their own UnmarshalJSON, and interface-typed values, are checked for
// depth and duplicate keys only. Malformed JSON is reported as errSyntax, for
// encoding/json to describe.
func checkShape(body []byte, t reflect.Type) error {
	if len(body) == 0 {
		return errSyntax
	}
	// The body is not written while the checker lives, so its keys can be
	// remembered as substrings of it without a copy each.
	c := checker{s: unsafe.String(&body[0], len(body)), seed: maphash.MakeSeed()}
	if err := c.value(t, 0); err != nil {
		return err
	}
	c.space()
	if c.i < len(c.s) {
		return fault.Invalid("body", "unexpected data after the JSON object")
	}
	return nil
}

type syntaxErr string

func (e syntaxErr) Error() string { return string(e) }

const errSyntax = syntaxErr("malformed JSON")

// seg is one step of a path: an object key, or an array index when key is unset.
type seg struct {
	key     string // raw, as written between the quotes
	escaped bool
	index   int
	isKey   bool
}

type checker struct {
	s    string
	i    int
	path []seg
	// keys holds the keys of the open map- and interface-typed objects, each
	// object's from its mark on; buf is scratch for unescaping a key.
	keys []keyRef
	seed maphash.Seed
	buf  []byte
	// quoted: the value being read fills a `json:",string"` field.
	quoted bool
	// items counts array elements and map or free-form object members (MaxItems).
	items int
	// inOpt: the value being read is inside a valid.Opt (see optShape); loose:
	// it is an element of a list or map there, whose type Opt judges.
	inOpt, loose bool
}

// item counts one element of the container at the current path.
func (c *checker) item() error {
	c.items++
	if c.items > MaxItems {
		return fault.Invalid(c.pathString(), "too many items: a body holds at most "+strconv.Itoa(MaxItems)+" list elements and map entries in all")
	}
	return nil
}

func (c *checker) pathString(last ...seg) string {
	var b strings.Builder
	for _, s := range append(c.path[:len(c.path):len(c.path)], last...) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if !s.isKey {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		k := s.key
		if s.escaped {
			k = string(unescape(nil, k))
		}
		if len(k) > 64 { // a field error never echoes a megabyte key
			k = k[:64] + "..."
		}
		b.WriteString(k)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

func (c *checker) space() {
	for c.i < len(c.s) {
		switch c.s[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// value reads one JSON value whose target type is t (nil: unchecked) at the
// given container depth.
func (c *checker) value(t reflect.Type, depth int) error {
	c.space()
	if c.i >= len(c.s) {
		return errSyntax
	}
	loose := c.loose
	c.loose = false
	if !loose {
		if err := c.kindOf(checked(t), c.s[c.i]); err != nil {
			return err
		}
	}
	switch ch := c.s[c.i]; {
	case ch == '{' || ch == '[':
		if depth >= MaxDepth {
			return fault.Invalid(c.pathString(), "nested deeper than "+strconv.Itoa(MaxDepth)+" levels")
		}
		inOpt := c.inOpt
		if shape, ok := optShape(t); ok {
			t, c.inOpt = shape, true
		}
		var err error
		if ch == '{' {
			err = c.object(t, depth+1)
		} else {
			err = c.array(t, depth+1)
		}
		c.inOpt = inOpt
		return err
	case ch == '"':
		_, _, err := c.str()
		return err
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.number()
	}
	return errSyntax
}

// kindOf refuses a value that cannot fill a typed target (a list where an
// object belongs, an object in a list of strings), by its path, before
// encoding/json would read all of it only to skip it. first is the value's
// first byte; null fills anything.
func (c *checker) kindOf(t reflect.Type, first byte) error {
	if t == nil || first == 'n' {
		return nil
	}
	var ok bool
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		ok = first == '{'
	case reflect.Slice:
		ok = first == '[' || (first == '"' && t.Elem().Kind() == reflect.Uint8)
	case reflect.Array:
		ok = first == '['
	case reflect.String:
		ok = first == '"'
	case reflect.Bool:
		ok = first == 't' || first == 'f'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		ok = first == '-' || (first >= '0' && first <= '9')
	default:
		return nil
	}
	if ok {
		return nil
	}
	if first == '"' && c.quoted {
		return nil // a `json:",string"` field takes its number or bool quoted
	}
	path := c.pathString()
	return fault.Invalid(path, "must be "+jsonType(t.Kind().String()))
}

func (c *checker) literal(word string) error {
	if !strings.HasPrefix(c.s[c.i:], word) {
		return errSyntax
	}
	c.i += len(word)
	return nil
}

func (c *checker) digits() int {
	n := 0
	for c.i < len(c.s) && c.s[c.i] >= '0' && c.s[c.i] <= '9' {
		c.i++
		n++
	}
	return n
}

func (c *checker) number() error {
	if c.s[c.i] == '-' {
		c.i++
	}
	if c.i < len(c.s) && c.s[c.i] == '0' {
		c.i++
	} else if c.digits() == 0 {
		return errSyntax
	}
	if c.i < len(c.s) && c.s[c.i] == '.' {
		c.i++
		if c.digits() == 0 {
			return errSyntax
		}
	}
	if c.i < len(c.s) && (c.s[c.i] == 'e' || c.s[c.i] == 'E') {
		c.i++
		if c.i < len(c.s) && (c.s[c.i] == '+' || c.s[c.i] == '-') {
			c.i++
		}
		if c.digits() == 0 {
			return errSyntax
		}
	}
	return nil
}

// str reads a string and answers its raw content (without quotes) and whether
// it holds escapes.
func (c *checker) str() (raw string, escaped bool, err error) {
	start := c.i + 1
	for c.i = start; c.i < len(c.s); c.i++ {
		switch ch := c.s[c.i]; {
		case ch == '"':
			raw = c.s[start:c.i]
			c.i++
			return raw, escaped, nil
		case ch == '\\':
			escaped = true
			c.i++
			if c.i >= len(c.s) {
				return "", false, errSyntax
			}
			switch c.s[c.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if c.i+4 >= len(c.s) {
					return "", false, errSyntax
				}
				for _, h := range []byte(c.s[c.i+1 : c.i+5]) {
					if !isHex(h) {
						return "", false, errSyntax
					}
				}
				c.i += 4
			default:
				return "", false, errSyntax
			}
		case ch < 0x20:
			return "", false, errSyntax
		}
	}
	return "", false, errSyntax
}

func isHex(h byte) bool {
	return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')
}

func (c *checker) object(t reflect.Type, depth int) error {
	c.i++ // '{'
	ks := newObjectKeys(checked(t))
	c.space()
	if c.i < len(c.s) && c.s[c.i] == '}' {
		c.i++
		return nil
	}
	for {
		here, child, err := c.member(&ks)
		if err != nil {
			return err
		}
		c.path = append(c.path, here)
		c.loose = c.inOpt && ks.fields == nil
		err = c.value(child, depth)
		c.quoted = false
		if err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		if end, err := c.objectNext(ks.mark); end || err != nil {
			return err
		}
	}
}

// objectKeys is what object knows of the keys of one open object: a struct's
// fields (the keys it takes, each at most once) or a map's element type
// (its keys, any, are checked for repeats when the object closes).
type objectKeys struct {
	fields   *structFields
	elem     reflect.Type
	seenBits uint64
	seen     map[int]struct{} // struct fields past the 64th, by index
	mark     int              // where this object's keys start in c.keys
}

func newObjectKeys(t reflect.Type) objectKeys {
	ks := objectKeys{mark: -1}
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			ks.fields = fieldsOf(t)
		case reflect.Map:
			ks.elem = t.Elem()
		}
	}
	return ks
}

// member reads one key and its colon, refusing an unknown or repeated struct
// field, and answers the key's path segment and the type of its value.
func (c *checker) member(ks *objectKeys) (seg, reflect.Type, error) {
	c.space()
	if c.i >= len(c.s) || c.s[c.i] != '"' {
		return seg{}, nil, errSyntax
	}
	start := c.i + 1
	raw, escaped, err := c.str()
	if err != nil {
		return seg{}, nil, err
	}
	key := raw
	if escaped {
		c.buf = unescape(c.buf[:0], raw)
		key = unsafe.String(unsafe.SliceData(c.buf), len(c.buf)) // only until the next key
	}
	here := seg{key: raw, escaped: escaped, isKey: true}
	child := ks.elem
	dup := false
	if ks.fields != nil {
		f, ok := ks.fields.index[key]
		if !ok {
			return seg{}, nil, fault.Invalid(c.pathString(here), "unknown field")
		}
		child = ks.fields.types[f]
		c.quoted = ks.fields.quoted[f]
		dup = ks.field(f)
	} else if err := c.mapKey(ks, key, start, len(raw)); err != nil {
		return seg{}, nil, err
	}
	if dup {
		return seg{}, nil, fault.Invalid(c.pathString(here), "appears more than once")
	}
	c.space()
	if c.i >= len(c.s) || c.s[c.i] != ':' {
		return seg{}, nil, errSyntax
	}
	c.i++
	return here, child, nil
}

// field marks struct field f as met and reports whether it was met before.
// Fields are kept by index, never by name: an escaped name lives in a buffer
// the next key overwrites.
func (ks *objectKeys) field(f int) bool {
	if f < 64 {
		dup := ks.seenBits&(1<<f) != 0
		ks.seenBits |= 1 << f
		return dup
	}
	if ks.seen == nil {
		ks.seen = map[int]struct{}{}
	}
	_, dup := ks.seen[f]
	ks.seen[f] = struct{}{}
	return dup
}

// mapKey counts a map entry and notes its key (written n bytes at start of
// the body) for the repeat check when the object closes.
func (c *checker) mapKey(ks *objectKeys, key string, start, n int) error {
	if err := c.item(); err != nil {
		return err
	}
	if ks.mark < 0 {
		ks.mark = len(c.keys)
	}
	if len(c.keys) == cap(c.keys) {
		// Doubling, never past one entry per 4 bytes of body (the
		// shortest member, `"":0`): at most twice what the keys need.
		grown := make([]keyRef, len(c.keys), min(max(2*cap(c.keys), 64), len(c.s)/4+1))
		copy(grown, c.keys)
		c.keys = grown
	}
	c.keys = append(c.keys, keyRef{hash: maphash.String(c.seed, key), at: uint32(start), n: uint32(n)})
	return nil
}

// objectNext reads what follows a member: a comma (more members) or the
// closing brace (end: a map's keys are then checked for repeats and
// forgotten from mark on).
func (c *checker) objectNext(mark int) (end bool, err error) {
	c.space()
	if c.i >= len(c.s) {
		return true, errSyntax
	}
	switch c.s[c.i] {
	case ',':
		c.i++
		return false, nil
	case '}':
		c.i++
		if mark >= 0 {
			err := c.duplicates(mark)
			c.keys = c.keys[:mark]
			return true, err
		}
		return true, nil
	default:
		return true, errSyntax
	}
}

// keyRef is one key of an open object: the hash of its value and where it is
// written in the body.
type keyRef struct {
	hash  uint64
	at, n uint32
}

func (c *checker) keyAt(k keyRef) string { return c.s[k.at : k.at+k.n] }

// duplicates reports a key that appears twice among c.keys[mark:], the keys
// of the object just read: sorted by hash, equal keys sit side by side. Memory
// is 16 bytes a key, whatever the keys' length.
func (c *checker) duplicates(mark int) error {
	keys := c.keys[mark:]
	if len(keys) < 2 {
		return nil
	}
	slices.SortFunc(keys, func(a, b keyRef) int {
		if a.hash != b.hash {
			return cmp.Compare(a.hash, b.hash)
		}
		return cmp.Compare(a.at, b.at)
	})
	for i := 1; i < len(keys); i++ {
		if keys[i].hash != keys[i-1].hash {
			continue
		}
		// Same hash: compare the values (a run of equal hashes is compared pairwise).
		for j := i - 1; j >= 0 && keys[j].hash == keys[i].hash; j-- {
			a, b := c.keyAt(keys[j]), c.keyAt(keys[i])
			if a == b || string(unescape(nil, a)) == string(unescape(nil, b)) {
				raw := c.keyAt(keys[i])
				return fault.Invalid(c.pathString(seg{key: raw, escaped: strings.IndexByte(raw, '\\') >= 0, isKey: true}), "appears more than once")
			}
		}
	}
	return nil
}

// unescape appends the value of a JSON string's raw content (already checked
// by str) to dst.
func unescape(dst []byte, raw string) []byte {
	for i := 0; i < len(raw); i++ {
		ch := raw[i]
		if ch != '\\' {
			dst = append(dst, ch)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if pair := utf16.DecodeRune(r, hex4(raw[i+3:i+7])); pair != utf8.RuneError {
					r = pair
					i += 6
				}
			}
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

func hex4(h string) rune {
	var r rune
	for i := range 4 {
		c := h[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func (c *checker) array(t reflect.Type, depth int) error {
	c.i++ // '['
	t = checked(t)
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	c.space()
	if c.i < len(c.s) && c.s[c.i] == ']' {
		c.i++
		return nil
	}
	for n := 0; ; n++ {
		if err := c.item(); err != nil {
			return err
		}
		c.path = append(c.path, seg{index: n})
		c.loose = c.inOpt
		if err := c.value(elem, depth); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		c.space()
		if c.i >= len(c.s) {
			return errSyntax
		}
		switch c.s[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return errSyntax
		}
	}
}

// checked is the type whose fields the checker holds a value to: pointers
// followed, nil for interfaces and for types that decode themselves.
func checked(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) ||
		reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return nil
	}
	return t
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	shaperType          = reflect.TypeFor[interface{ JSONShape() reflect.Type }]()
)

// optShape is the type a self-decoding PATCH field (valid.Opt[T]) declares for
// its value, T. The checker reads the value's objects against T, so a field T
// does not have is refused by its dotted path and struct fields inside it must
// have their types; the type of the value itself, and of the elements of a
// list or map in it, is left to the field (Opt reports it under its own name).
func optShape(t reflect.Type) (reflect.Type, bool) {
	if t == nil {
		return nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !t.Implements(shaperType) {
		return nil, false
	}
	return reflect.New(t).Elem().Interface().(interface{ JSONShape() reflect.Type }).JSONShape(), true
}

// structFields are the exact JSON names of a struct's fields (embedded structs
// flattened) and their types.
type structFields struct {
	index  map[string]int
	types  []reflect.Type
	quoted []bool
}

var fieldCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	f := &structFields{index: map[string]int{}}
	for name, jf := range jsonFields(t) {
		f.index[name] = len(f.types)
		f.types = append(f.types, jf.typ)
		f.quoted = append(f.quoted, jf.quoted)
	}
	fieldCache.Store(t, f)
	return f
}
