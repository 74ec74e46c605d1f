package valid_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

func TestOptTellsAbsentNullValueAndWrongType(t *testing.T) {
	var in struct {
		Absent valid.Opt[string] `json:"absent"`
		Null   valid.Opt[string] `json:"null"`
		Value  valid.Opt[string] `json:"value"`
		Wrong  valid.Opt[string] `json:"wrong"`
	}
	if err := json.Unmarshal([]byte(`{"null":null,"value":"v","wrong":3}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.Absent.Set || !in.Null.Set || in.Null.Value != nil || in.Null.Bad {
		t.Errorf("absent %+v, null %+v", in.Absent, in.Null)
	}
	if !in.Value.Set || in.Value.Value == nil || *in.Value.Value != "v" || in.Value.Bad {
		t.Errorf("value %+v", in.Value)
	}
	if !in.Wrong.Set || in.Wrong.Value != nil || !in.Wrong.Bad {
		t.Errorf("wrong type %+v", in.Wrong)
	}
}

func TestRequired(t *testing.T) {
	f := fault.Fields{}
	v := " x "
	if got := valid.Required(f, "name", &v); got != "x" || f.Err() != nil {
		t.Fatalf("Required(%q) = %q, %v", v, got, f.Err())
	}
	if got := valid.Required(f, "title", nil); got != "" || f.Err() == nil {
		t.Fatalf("Required(nil) = %q, %v", got, f.Err())
	}
}

func TestOptWrongAndNotNull(t *testing.T) {
	type policy struct {
		Max int `json:"max"`
	}
	var in struct {
		Absent valid.Opt[string] `json:"absent"`
		Null   valid.Opt[string] `json:"null"`
		Wrong  valid.Opt[string] `json:"wrong"`
		Inner  valid.Opt[policy] `json:"inner"`
		Value  valid.Opt[string] `json:"value"`
	}
	if err := json.Unmarshal([]byte(`{"null":null,"wrong":3,"inner":{"max":1.5},"value":"v"}`), &in); err != nil {
		t.Fatal(err)
	}
	f := fault.Fields{}
	if in.Absent.NotNull(f, "absent", "a string") != nil || in.Null.NotNull(f, "null", "a string") != nil ||
		in.Wrong.NotNull(f, "wrong", "a string") != nil || !in.Inner.Wrong(f, "inner", "an object") {
		t.Fatalf("values: %+v", in)
	}
	if v := in.Value.NotNull(f, "value", "a string"); v == nil || *v != "v" {
		t.Fatalf("value: %v", v)
	}
	want := map[string]string{"null": "must not be null", "wrong": "must be a string", "inner.max": "must be an integer"}
	if len(f) != len(want) {
		t.Fatalf("errors %v, want %v", f, want)
	}
	for k, msg := range want {
		if len(f[k]) != 1 || f[k][0] != msg {
			t.Errorf("%s: %v, want %q", k, f[k], msg)
		}
	}
}

func TestPatchName(t *testing.T) {
	// name "-": nil (absent, null or mistyped).
	for body, want := range map[string]struct{ name, err string }{
		`{}`:                 {name: "-"},
		`{"name":"  Ops  "}`: {name: "Ops"},
		`{"name":null}`:      {name: "-", err: "must not be null"},
		`{"name":7}`:         {name: "-", err: "must be a string"},
		`{"name":"   "}`:     {name: "", err: "is required"},
		`{"name":"abcdef"}`:  {name: "abcdef", err: "must be 1-5 characters"},
	} {
		var in struct {
			Name valid.Opt[string] `json:"name"`
		}
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
		f := fault.Fields{}
		name := "-"
		if got := valid.PatchName(f, in.Name, 5); got != nil {
			name = *got
		}
		if err := strings.Join(f["name"], "; "); name != want.name || err != want.err {
			t.Errorf("%s: name %q, error %q; want %q, %q", body, name, err, want.name, want.err)
		}
	}
}
