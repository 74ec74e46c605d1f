package httpapi_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

type createReq struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	A     struct {
		B int `json:"b"`
	} `json:"a"`
}

// fieldErrors returns the validation error's field paths, failing unless err is
// a 400 validation error.
func fieldErrors(t *testing.T, err error) map[string][]string {
	t.Helper()
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.KindValidation || httpapi.Status(fe.Kind) != http.StatusBadRequest {
		t.Fatalf("err = %v, want a 400 validation error", err)
	}
	d, _ := fe.Details.(map[string]any)
	f, _ := d["fieldErrors"].(map[string][]string)
	if len(f) == 0 {
		t.Fatalf("validation error %v has no fieldErrors (details %#v)", err, fe.Details)
	}
	return f
}

func decode(body string) (createReq, error) {
	var v createReq
	r := jsonRequest(strings.NewReader(body))
	return v, httpapi.Decode(r, &v)
}

func TestDecodeAccepts(t *testing.T) {
	for _, body := range []string{
		`{"name":"x","count":2,"tags":["a"],"a":{"b":1}}`,
		"  \n{\"name\":\"x\"}\n  ",
		`{}`,
	} {
		if _, err := decode(body); err != nil {
			t.Errorf("Decode(%q) = %v, want nil", body, err)
		}
	}
	v, _ := decode(`{"name":"x","a":{"b":7}}`)
	if v.Name != "x" || v.A.B != 7 {
		t.Fatalf("decoded %+v", v)
	}
}

func TestDecodeNamesTheField(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"unknown field", `{"name":"x","extra":1}`, "extra"},
		{"unknown nested field", `{"name":"x","a":{"b":1,"extra":1}}`, "a.extra"},
		{"wrong type string", `{"name":5}`, "name"},
		{"wrong type int", `{"count":"five"}`, "count"},
		{"wrong type array", `{"tags":"a"}`, "tags"},
		{"wrong type nested", `{"a":{"b":"x"}}`, "a.b"},
		{"wrong type nested object", `{"a":[]}`, "a"},
		{"number out of range", `{"count":1e40}`, "count"},
		{"empty body", ``, "body"},
		{"blank body", "  \n ", "body"},
		{"not an object", `[1,2]`, "body"},
		{"null", `null`, "body"},
		{"malformed", `{"name":`, "body"},
		{"syntax", `{"name" "x"}`, "body"},
		{"trailing object", `{"name":"x"} {"name":"y"}`, "body"},
		{"trailing garbage", `{"name":"x"} x`, "body"},
		{"trailing bracket", `{"name":"x"}]`, "body"},
		{"trailing brace", `{"name":"x"}}`, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decode(c.body)
			f := fieldErrors(t, err)
			if _, ok := f[c.field]; !ok {
				t.Fatalf("Decode(%q) named %v, want %q", c.body, f, c.field)
			}
		})
	}
}

func TestDecodeBodyLimit(t *testing.T) {
	var v createReq
	body := `{"name":"` + strings.Repeat("x", 100) + `"}`
	err := httpapi.DecodeLimit(jsonRequest(strings.NewReader(body)), &v, 64)
	fe, ok := fault.As(err)
	if !ok || httpapi.Status(fe.Kind) != http.StatusRequestEntityTooLarge {
		t.Fatalf("over the limit: err = %v, want 413", err)
	}
	// Exactly at the limit is fine.
	err = httpapi.DecodeLimit(jsonRequest(strings.NewReader(body)), &v, int64(len(body)))
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	// The default limit is MaxBody.
	big := `{"name":"` + strings.Repeat("x", httpapi.MaxBody) + `"}`
	err = httpapi.Decode(jsonRequest(strings.NewReader(big)), &v)
	if fe, ok := fault.As(err); !ok || httpapi.Status(fe.Kind) != http.StatusRequestEntityTooLarge {
		t.Fatalf("over MaxBody: err = %v, want 413", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestDecodeUnreadableBody(t *testing.T) {
	var v createReq
	err := httpapi.Decode(jsonRequest(failingReader{}), &v)
	fe, ok := fault.As(err)
	if !ok || httpapi.Status(fe.Kind) != http.StatusBadRequest {
		t.Fatalf("unreadable body: err = %v, want 400", err)
	}
}

// The encoded answer carries the field in details.fieldErrors.
func TestDecodeErrorEnvelope(t *testing.T) {
	h := httpapi.Edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v createReq
		if err := httpapi.Decode(r, &v); err != nil {
			httpapi.WriteError(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}), quietLog())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, jsonRequest(strings.NewReader(`{"name":"x","extra":true}`)))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", rec.Code)
	}
	body := decodeBody(t, rec)
	if body["error"] != "Validation failed" || body["code"] != "validation_failed" {
		t.Fatalf("body %v", body)
	}
	details, _ := body["details"].(map[string]any)
	fields, _ := details["fieldErrors"].(map[string]any)
	if _, ok := fields["extra"]; !ok {
		t.Fatalf("details.fieldErrors = %v, want extra named", details)
	}
}

func TestDuplicateKeysAreRefusedByPath(t *testing.T) {
	type inner struct {
		A string `json:"a"`
	}
	var v struct {
		Name  string  `json:"name"`
		Items []inner `json:"items"`
		In    inner   `json:"in"`
	}
	for body, path := range map[string]string{
		`{"name":"a","name":"b"}`:                        "name",
		`{"in":{"a":"x","a":"y"}}`:                       "in.a",
		`{"items":[{"a":"x"},{"a":"y","a":"z"}]}`:        "items.1.a",
		`{"name":"a","in":{"a":"[\"name\"]"},"name":""}`: "name",
	} {
		f := fieldErrors(t, httpapi.DecodeBytes([]byte(body), &v))
		if _, ok := f[path]; !ok {
			t.Errorf("%s: fieldErrors %v, want %s", body, f, path)
		}
	}
	if err := httpapi.DecodeBytes([]byte(`{"name":"a","in":{"a":"name"},"items":[{"a":"1"},{"a":"2"}]}`), &v); err != nil {
		t.Fatalf("distinct keys refused: %v", err)
	}
}

func TestBodiesMustBeJSON(t *testing.T) {
	var v struct {
		Name string `json:"name"`
	}
	for _, ct := range []string{"text/plain", "", "application/x-www-form-urlencoded"} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"a"}`))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		if _, ok := fieldErrors(t, httpapi.Decode(r, &v))["Content-Type"]; !ok {
			t.Errorf("Content-Type %q accepted", ct)
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"name":"a"}`))
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	if err := httpapi.Decode(r, &v); err != nil {
		t.Fatal(err)
	}
}

// jsonRequest is a POST whose body is declared as JSON.
func jsonRequest(body io.Reader) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/x", body)
	r.Header.Set("Content-Type", "application/json")
	return r
}

// A struct field past the 64th (past the bit set) is remembered too, by
// index: an escaped name lives in a buffer the next escaped key overwrites,
// so a name kept as a map key could change under the map.
func TestDuplicateFieldPastThe64thIsRefused(t *testing.T) {
	fields := make([]reflect.StructField, 70)
	for i := range fields {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))}
	}
	v := reflect.New(reflect.StructOf(fields)).Interface()
	body := `{"f\u0036\u0035": 1, "f\u0036\u0036": 2, "f65": 3}`
	err := httpapi.DecodeBytes([]byte(body), v)
	if err == nil {
		t.Fatal("a repeated f65 after escaped keys was accepted")
	}
	if f := fieldErrors(t, err); !slices.Contains(f["f65"], "appears more than once") {
		t.Fatalf("repeated f65 after escaped keys: fieldErrors %v", f)
	}
}
