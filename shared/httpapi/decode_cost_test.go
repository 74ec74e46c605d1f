package httpapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// richBody is a target with every kind of field a route's body has: strings,
// numbers, lists, maps, nested objects and lists of objects.
type richBody struct {
	Name  string            `json:"name"`
	Count int               `json:"count"`
	Tags  []string          `json:"tags"`
	Meta  map[string]string `json:"meta"`
	In    struct {
		A string `json:"a"`
		B []int  `json:"b"`
	} `json:"in"`
	Items []struct {
		A string `json:"a"`
	} `json:"items"`
	Any any `json:"any"`
}

type loginBody struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// fill repeats unit after prefix until the body is size bytes with suffix.
func fill(prefix, unit, sep, suffix string, size int) []byte {
	var b bytes.Buffer
	b.WriteString(prefix)
	for i := 0; ; i++ {
		u := strings.ReplaceAll(unit, "#", fmt.Sprint(i))
		if b.Len()+len(u)+len(sep)+len(suffix) > size {
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(u)
	}
	b.WriteString(suffix)
	return b.Bytes()
}

// atLimit is a body of n units, each padded with x at its # so the body is
// about size bytes: with n units of items the body holds httpapi.MaxItems, the
// costliest bodies that are accepted.
func atLimit(prefix, unit, suffix string, size, n int) []byte {
	pad := max(0, (size-len(prefix)-len(suffix))/n-len(unit)) // unit, its separator, its padding
	var b bytes.Buffer
	b.WriteString(prefix)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.ReplaceAll(unit, "#", fmt.Sprint(i)+strings.Repeat("x", max(0, pad-len(fmt.Sprint(i))))))
	}
	b.WriteString(suffix)
	return b.Bytes()
}

func nested(open, close string, size int) []byte {
	n := (size - 2) / (len(open) + len(close))
	return []byte("{" + strings.Repeat(open, n) + strings.Repeat(close, n) + "}")
}

// hostileShapes are 1 MiB bodies of the shapes that cost most: deep nesting of
// every kind, wide objects, long lists, long strings, escapes.
func hostileShapes() map[string][]byte {
	const size = httpapi.MaxBody
	return map[string][]byte{
		"nested objects":       nested(`"a":{`, `}`, size),
		"nested arrays":        []byte(`{"any":` + strings.Repeat("[", size/2-8) + strings.Repeat("]", size/2-8) + `}`),
		"nested in any":        []byte(`{"any":` + string(nested(`"a":{`, `}`, size-8)) + `}`),
		"unknown wide object":  fill(`{`, `"k#":0`, ",", `}`, size),
		"wide map":             fill(`{"meta":{`, `"k#":""`, ",", `}}`, size),
		"wide any object":      fill(`{"any":{`, `"k#":0`, ",", `}}`, size),
		"long string list":     fill(`{"tags":[`, `""`, ",", `]}`, size),
		"long number list":     fill(`{"in":{"b":[`, `1`, ",", `]}}`, size),
		"list of objects":      fill(`{"items":[`, `{"a":""}`, ",", `]}`, size),
		"list of empty arrays": fill(`{"any":[`, `[]`, ",", `]}`, size),
		"long string":          []byte(`{"name":"` + strings.Repeat("x", size-12) + `"}`),
		"escapes":              []byte(`{"name":"` + strings.Repeat(`\u00e9`, (size-12)/6) + `"}`),
		"escaped keys":         fill(`{"meta":{`, `"\u006b#":""`, ",", `}}`, size),
		"duplicate at the end": fill(`{"meta":{`, `"k#":""`, ",", `,"k0":""}}`, size),
		"wrong types":          fill(`{"tags":[`, `{}`, ",", `]}`, size),
		// Accepted, at the item limit: what a body may cost once it passes.
		"strings at the limit":       atLimit(`{"tags":[`, `"#"`, `]}`, size, httpapi.MaxItems),
		"any strings at the limit":   atLimit(`{"any":[`, `"#"`, `]}`, size, httpapi.MaxItems),
		"any numbers at the limit":   atLimit(`{"any":[`, `1`, `]}`, size, httpapi.MaxItems),
		"empty lists at the limit":   atLimit(`{"any":[`, `[]`, `]}`, size, httpapi.MaxItems),
		"empty objects at the limit": atLimit(`{"any":[`, `{}`, `]}`, size, httpapi.MaxItems),
		"map at the limit":           atLimit(`{"meta":{`, `"#":""`, `}}`, size, httpapi.MaxItems),
		"any object at the limit":    atLimit(`{"any":{`, `"#":{}`, `}}`, size, httpapi.MaxItems),
		"objects at the limit":       atLimit(`{"items":[`, `{"a":"#"}`, `]}`, size, httpapi.MaxItems),
		"nested maps at the limit":   atLimit(`{"any":{`, `"#":{"k":[]}`, `}}`, size, httpapi.MaxItems/2),
		"one item too many":          []byte(`{"tags":[` + strings.Repeat(`"",`, httpapi.MaxItems) + `""]}`),
	}
}

// allocated is the bytes f allocates (the least of three runs).
func allocated(f func()) uint64 {
	best := ^uint64(0)
	for range 3 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		best = min(best, after.TotalAlloc-before.TotalAlloc)
	}
	return best
}

// Issue 19 finding 1: a 240 KB body of nested objects took the process from 26
// to 1,636 MiB (a path string built at every level). Now a 1 MiB body of any
// shape costs under 10 MiB of allocation, from reading it through the cap to
// the filled target: the one pass that checks depth, duplicate keys, unknown
// fields and kinds, and the count of list elements and map entries (MaxItems),
// refuse before encoding/json allocates per element (before the count, a list
// of 350,000 empty lists into an interface cost 36 MiB, 350,000 empty strings
// 28 MiB, 260,000 numbers 21 MiB). The bound is on bytes allocated, not on
// time.
func TestDecodeCostIsLinear(t *testing.T) {
	const bound = 10 << 20
	for name, body := range hostileShapes() {
		if len(body) > httpapi.MaxBody {
			t.Fatalf("%s: %d bytes, over MaxBody", name, len(body))
		}
		for _, target := range []func() any{func() any { return &richBody{} }, func() any { return &loginBody{} }} {
			request := func() *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				return r
			}
			check := allocated(func() {
				b, err := httpapi.ReadBody(request(), httpapi.MaxBody)
				if err == nil {
					_ = httpapi.CheckShape(b, target())
				}
			})
			if check > bound {
				t.Errorf("%s, %T: reading and checking allocated %d bytes, want under %d", name, target(), check, bound)
			}
			var err error
			full := allocated(func() { err = httpapi.Decode(request(), target()) })
			t.Logf("%-22s %-22T check %5.2f MiB, decode %5.2f MiB (%v)", name, target(), float64(check)/(1<<20), float64(full)/(1<<20), err)
			if _, ok := fault.As(err); err != nil && !ok {
				t.Errorf("%s: %v is not a client error", name, err)
			}
			if full > bound {
				t.Errorf("%s, %T: decoding allocated %d bytes, want under %d (%v)", name, target(), full, bound, err)
			}
			if target, ok := target().(*richBody); ok && strings.HasSuffix(name, "at the limit") {
				if err := httpapi.DecodeBytes(body, target); err != nil {
					t.Errorf("%s: refused (%v), want accepted", name, err)
				}
			}
		}
	}
}

// A body holds at most MaxItems list elements and map entries in all; one
// more is 400 naming the list where the count ran out, and struct fields do
// not count.
func TestDecodeItemLimitNamesTheList(t *testing.T) {
	t.Parallel()
	var v richBody
	ok := []byte(`{"tags":[` + strings.Repeat(`"",`, httpapi.MaxItems-2) + `""],"meta":{"k":""},"name":"x","count":1}`)
	if err := httpapi.DecodeBytes(ok, &v); err != nil || len(v.Tags) != httpapi.MaxItems-1 {
		t.Fatalf("%d items refused: %v", httpapi.MaxItems, err)
	}
	for body, path := range map[string]string{
		`{"tags":[` + strings.Repeat(`"",`, httpapi.MaxItems) + `""]}`:                                                                  "tags",
		`{"tags":[` + strings.Repeat(`"",`, httpapi.MaxItems-1) + `""],"meta":{"k":""}}`:                                                "meta",
		`{"any":[` + strings.Repeat(`[1,2],`, httpapi.MaxItems/3) + `[1,2]]}`:                                                           "any." + strconv.Itoa(httpapi.MaxItems/3),
		`{"items":[` + strings.Repeat(`{"a":""},`, httpapi.MaxItems) + `{"a":""}]}`:                                                     "items",
		`{"in":{"b":[` + strings.Repeat(`1,`, httpapi.MaxItems/2) + `1]},"tags":[` + strings.Repeat(`"",`, httpapi.MaxItems/2) + `""]}`: "tags",
	} {
		f := fieldErrors(t, httpapi.DecodeBytes([]byte(body), &v))
		if msgs, ok := f[path]; !ok || !strings.Contains(msgs[0], "at most 20000") {
			t.Errorf("%.40s...: fieldErrors %v, want %s", body, f, path)
		}
	}
}

// Nesting deeper than 32 levels is 400 `Validation failed` naming the path
// where it went too deep; 32 levels are fine
// (docs/decisions.md#validation-and-bodies).
func TestDecodeDepthLimit(t *testing.T) {
	t.Parallel()
	var v richBody
	ok32 := []byte(`{"any":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`)
	if err := httpapi.DecodeBytes(ok32, &v); err != nil {
		t.Fatalf("32 levels refused: %v", err)
	}
	deep := []byte(`{"any":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}`)
	f := fieldErrors(t, httpapi.DecodeBytes(deep, &v))
	want := "any" + strings.Repeat(".0", 31)
	if _, ok := f[want]; !ok || len(f) != 1 {
		t.Fatalf("33 levels: fieldErrors %v, want %s", f, want)
	}
	objs := nested(`"a":{`, `}`, 100_000)
	var anyObj map[string]any
	f = fieldErrors(t, httpapi.DecodeBytes(objs, &anyObj))
	want = strings.TrimSuffix(strings.Repeat("a.", 32), ".")
	if msgs, ok := f[want]; !ok || !strings.Contains(msgs[0], "32 levels") {
		t.Fatalf("nested objects: fieldErrors %v, want %s", f, want)
	}
	// Behind a field the target does not have, the unknown field is named first.
	f = fieldErrors(t, httpapi.DecodeBytes([]byte(`{"x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`), &v))
	if _, ok := f["x"]; !ok {
		t.Fatalf("fieldErrors %v, want x", f)
	}
}

// The checker refuses case-folded names by their whole path.
func TestDecodeNamesCaseFoldedFields(t *testing.T) {
	t.Parallel()
	var v richBody
	for body, path := range map[string]string{
		`{"Name":"x"}`:                    "Name",
		`{"in":{"A":"x"}}`:                "in.A",
		`{"items":[{"a":""},{"A":""}]}`:   "items.1.A",
		`{"meta":{"k":"v"},"Meta":{}}`:    "Meta",
		`{"meta":{"k":"v","k":"w"}}`:      "meta.k",
		`{"any":{"k":1,"k":2}}`:           "any.k",
		`{"any":[{"k":1},{"k":1,"k":2}]}`: "any.1.k",
	} {
		f := fieldErrors(t, httpapi.DecodeBytes([]byte(body), &v))
		if _, ok := f[path]; !ok {
			t.Errorf("%s: fieldErrors %v, want %s", body, f, path)
		}
	}
}

// A GET route never reads the body it was sent; a body over a route's cap is
// 413 before authentication, and a route may set a smaller cap.
func TestRouterBodyCaps(t *testing.T) {
	t.Parallel()
	var authenticated int
	rt := httpapi.NewRouter(authFunc(func() { authenticated++ }), nil)
	var seen []byte
	read := func(w http.ResponseWriter, r *http.Request) error {
		b, err := httpapi.ReadBody(r, httpapi.MaxBody)
		seen = b
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/get", Access: httpapi.Public, Handle: read},
		httpapi.Route{Method: http.MethodPost, Path: "/post", Access: httpapi.User, NoAuthz: true, Handle: read},
		httpapi.Route{Method: http.MethodPost, Path: "/small", Access: httpapi.Public, MaxBody: 32 << 10, Handle: read},
	)
	body := &countingReader{r: bytes.NewReader(make([]byte, 9<<20))}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/get", body))
	if rec.Code != http.StatusNoContent || body.n != 0 || len(seen) != 0 {
		t.Fatalf("GET with a 9 MiB body: %d, %d bytes read", rec.Code, body.n)
	}
	big := httptest.NewRequest(http.MethodPost, "/post", bytes.NewReader(make([]byte, httpapi.MaxBody+1)))
	rec = httptest.NewRecorder()
	rt.ServeHTTP(rec, big)
	if rec.Code != http.StatusRequestEntityTooLarge || authenticated != 0 {
		t.Fatalf("declared 1 MiB + 1: %d, authenticated %d times", rec.Code, authenticated)
	}
	// A body longer than it declared (chunked) stops at the cap.
	chunked := &countingReader{r: bytes.NewReader(make([]byte, 2<<20))}
	req := httptest.NewRequest(http.MethodPost, "/post", chunked)
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || chunked.n > httpapi.MaxBody+1 {
		t.Fatalf("undeclared 2 MiB: %d after reading %d bytes", rec.Code, chunked.n)
	}
	for size, want := range map[int]int{32 << 10: 204, 32<<10 + 1: 413} {
		rec = httptest.NewRecorder()
		rt.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/small", bytes.NewReader(make([]byte, size))))
		if rec.Code != want {
			t.Errorf("%d bytes on a 32 KB route: %d, want %d", size, rec.Code, want)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

type authFunc func()

func (f authFunc) Authenticate(w http.ResponseWriter, r *http.Request, rt httpapi.Route) (*http.Request, error) {
	f()
	return r, nil
}

func FuzzDecode(f *testing.F) {
	for _, body := range hostileShapes() {
		if len(body) < 4096 {
			f.Add(body)
		}
	}
	for _, s := range []string{`{"name":"x","tags":["a"],"in":{"a":"b","b":[1]},"items":[{"a":""}],"meta":{"k":"v"},"any":[{}]}`,
		`{"name":"a","name":"b"}`, `{"any":[[[[[[]]]]]]}`, `{"Name":1}`, `{"a":"\u00`, `{} x`, `{"any":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v richBody
		start := time.Now()
		err := httpapi.DecodeBytes(body, &v)
		if err != nil {
			if _, ok := fault.As(err); !ok {
				t.Fatalf("%q: %v is not a client error", body, err)
			}
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("%d bytes took %v", len(body), took)
		}
	})
}

// BenchmarkDecodeHostile reports the cost of each 1 MiB hostile shape.
func BenchmarkDecodeHostile(b *testing.B) {
	for name, body := range hostileShapes() {
		b.Run(strings.ReplaceAll(name, " ", "-"), func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				var v richBody
				_ = httpapi.DecodeBytes(body, &v)
			}
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/body")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB/body")
		})
	}
}
