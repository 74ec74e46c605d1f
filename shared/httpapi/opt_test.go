package httpapi_test

import (
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/valid"
)

type patchReq struct {
	Name    valid.Opt[string]            `json:"name"`
	Tags    valid.Opt[[]string]          `json:"tags"`
	Fields  valid.Opt[map[string]string] `json:"fields"`
	Policy  valid.Opt[struct{ Max int }] `json:"policy"`
	Headers valid.Opt[[]struct {
		Key string `json:"key"`
	}] `json:"headers"`
}

// Inside a valid.Opt the checker still refuses fields the value's type does
// not have, and wrong types of struct fields, by their dotted path; the type
// of the value itself and of list or map elements is left to the Opt.
func TestDecodeChecksInsideOpt(t *testing.T) {
	for _, c := range []struct{ body, field string }{
		{`{"policy":{"Max":1,"min":2}}`, "policy.min"},
		{`{"policy":{"Max":"x"}}`, "policy.Max"},
		{`{"headers":[{"key":"a","extra":1}]}`, "headers.0.extra"},
		{`{"headers":[{"key":1}]}`, "headers.0.key"},
		{`{"name":"a","name":"b"}`, "name"},
	} {
		var v patchReq
		err := httpapi.Decode(jsonRequest(strings.NewReader(c.body)), &v)
		if f := fieldErrors(t, err); f[c.field] == nil {
			t.Errorf("Decode(%s) named %v, want %s", c.body, f, c.field)
		}
	}
	for _, body := range []string{`{"name":3}`, `{"tags":[1]}`, `{"tags":"a"}`, `{"fields":{"k":5}}`, `{"policy":[]}`, `{"headers":[3]}`} {
		var v patchReq
		if err := httpapi.Decode(jsonRequest(strings.NewReader(body)), &v); err != nil {
			t.Errorf("Decode(%s) = %v, want the Opt to keep it as Bad", body, err)
			continue
		}
		if !v.Name.Bad && !v.Tags.Bad && !v.Fields.Bad && !v.Policy.Bad && !v.Headers.Bad {
			t.Errorf("Decode(%s): no field marked Bad: %+v", body, v)
		}
	}
	var v patchReq
	if err := httpapi.Decode(jsonRequest(strings.NewReader(`{"name":null,"tags":["a"],"policy":{"Max":2}}`)), &v); err != nil ||
		!v.Name.Set || v.Name.Value != nil || len(*v.Tags.Value) != 1 || v.Policy.Value.Max != 2 || v.Fields.Set {
		t.Fatalf("decoded %+v, %v", v, err)
	}
}
