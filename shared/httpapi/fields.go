package httpapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
)

// exactFields refuses object keys that match a field only case-insensitively:
// encoding/json folds case ("Status" fills status), which DisallowUnknownFields
// does not catch, so a body could say one thing twice or set a field under a name
// the contract does not have. It walks the body along the target type: structs,
// pointers, slices and maps of them; types with their own UnmarshalJSON decide
// for themselves.
func exactFields(body []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil {
			return nil // not an object here: the decoder already judged it
		}
		fields := jsonFields(t)
		for k, raw := range obj {
			ft, ok := fields[k]
			if !ok {
				return fault.Invalid(join(path, k), "unknown field")
			}
			if err := exactFields(raw, ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(body, &items) != nil {
			return nil
		}
		for i, raw := range items {
			if err := exactFields(raw, t.Elem(), join(path, itoa(i))); err != nil {
				return err
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(body, &obj) != nil {
			return nil
		}
		for k, raw := range obj {
			if err := exactFields(raw, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonFields maps the exact JSON names of t's fields (embedded structs
// flattened) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, taken := out[k]; !taken {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func itoa(i int) string { return strconv.Itoa(i) }
