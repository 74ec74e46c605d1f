package httpapi

import (
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
)

type inner struct {
	Name string `json:"name"`
}

type outer struct {
	Status string           `json:"status"`
	Items  []inner          `json:"items"`
	ByKey  map[string]inner `json:"byKey"`
	In     *inner           `json:"in"`
}

// Keys that match a field only when case is folded are refused, at any depth,
// naming the path; exact keys pass.
func TestDecodeRefusesCaseMismatchedFields(t *testing.T) {
	var ok outer
	if err := DecodeBytes([]byte(`{"status":"a","items":[{"name":"x"}],"byKey":{"k":{"name":"y"}},"in":{"name":"z"}}`), &ok); err != nil {
		t.Fatal(err)
	}
	for body, field := range map[string]string{
		`{"Status":"a"}`:               "Status",
		`{"status":"a","STATUS":"b"}`:  "STATUS",
		`{"items":[{"Name":"x"}]}`:     "items.0.Name",
		`{"byKey":{"k":{"NAME":"y"}}}`: "byKey.k.NAME",
		`{"in":{"nAme":"z"}}`:          "in.nAme",
	} {
		var v outer
		err := DecodeBytes([]byte(body), &v)
		fe, isFault := fault.As(err)
		if !isFault {
			t.Fatalf("%s: %v", body, err)
		}
		details, _ := fe.Details.(map[string]any)
		fields, _ := details["fieldErrors"].(map[string][]string)
		if _, named := fields[field]; !named {
			t.Fatalf("%s: %v does not name %s", body, fe.Details, field)
		}
	}
}
