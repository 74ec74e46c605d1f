package filter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
)

var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// web is a Windows server seen a minute ago; bare has nothing but an id.
var (
	web = &Device{
		ID: "d1", OrgID: "org-a", SiteID: "site-1", GroupIDs: []string{"grp-1", "grp-2"},
		Hostname: "WEB-01.example.com", DisplayName: "Web server", AgentVersion: "2.4.1", LastUser: "alice",
		OSVersion: "10.0.20348", OSBuild: "20348", Status: "online", OSType: "windows", Architecture: "x64",
		DeviceRole: "server", IsHeadless: ptr(true), UptimeSeconds: ptr(86400.0),
		EnrolledAt: at("2026-09-15T08:30:00Z"), LastSeenAt: at("2026-11-24T11:59:00Z"),
		Tags: []string{"Production", "web"}, CustomFields: map[string]string{"owner": "ops", "rack": "R12"},
		Manufacturer: "Dell", Model: "PowerEdge R650", SerialNumber: "SN123", CPUModel: "Xeon Gold", GPUModel: "",
		CPUCores: ptr(16.0), RAMTotalMB: ptr(65536.0), DiskTotalGB: ptr(960.0),
		IPAddress: "10.0.0.5", PublicIP: "203.0.113.9", MACAddress: "00:11:22:33:44:55",
		CPUPercent: ptr(91.5), RAMPercent: ptr(40.0), DiskPercent: ptr(77.0),
		Software: []string{"Google Chrome", "7-Zip", "Microsoft Edge"},
	}
	bare = &Device{ID: "d2", OrgID: "org-b", Status: "offline", OSType: "linux"}
)

func cond(field, op string, value any) string {
	c := map[string]any{"field": field, "operator": op}
	if value != nil {
		c["value"] = value
	}
	b, _ := json.Marshal(map[string]any{"operator": "AND", "conditions": []any{c}})
	return string(b)
}

func compile(t testing.TB, body string) Matcher {
	t.Helper()
	g, err := Parse(json.RawMessage(body), "conditions")
	if err != nil {
		t.Fatalf("Parse(%s): %v (%v)", body, err, details(err))
	}
	m, err := g.Compile(now)
	if err != nil {
		t.Fatalf("Compile(%s): %v", body, err)
	}
	return m
}

func details(err error) map[string][]string {
	fe, ok := fault.As(err)
	if !ok {
		return nil
	}
	d, _ := fe.Details.(map[string]any)
	f, _ := d["fieldErrors"].(map[string][]string)
	return f
}

// allOperators is every operator word of the spec.
var allOperators = []string{"equals", "notEquals", "greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals",
	"contains", "notContains", "startsWith", "endsWith", "matches", "in", "notIn", "hasAny", "hasAll", "isEmpty",
	"isNotEmpty", "isNull", "isNotNull", "before", "after", "between", "withinLast", "notWithinLast"}

// sampleValue is a well-formed value for op on a field of type typ.
func sampleValue(typ Type, field, op string) any {
	switch op {
	case "isNull", "isNotNull", "isEmpty", "isNotEmpty":
		return nil
	case "in", "notIn", "hasAny", "hasAll":
		switch field {
		case "status":
			return []string{"online"}
		case "osType":
			return []string{"windows"}
		case "architecture":
			return []string{"x64"}
		case "deviceRole":
			return []string{"server"}
		}
		return []string{"x"}
	case "between":
		if typ == TypeDatetime {
			return map[string]any{"from": "2026-01-01", "to": "2026-12-31"}
		}
		return map[string]any{"from": 1, "to": 2}
	case "withinLast", "notWithinLast":
		return map[string]any{"amount": 2, "unit": "days"}
	}
	switch typ {
	case TypeNumber:
		return 3
	case TypeBoolean:
		return true
	case TypeDatetime:
		return "2026-11-01T00:00:00Z"
	case TypeEnum:
		return sampleValue(typ, field, "in").([]string)[0]
	}
	return "x"
}

// Every field of the catalogue takes exactly the operators of its type; every
// other operator is refused naming the condition's operator path.
func TestOperatorByTypeMatrix(t *testing.T) {
	fields := Fields()
	custom := Custom()
	custom.Key = "custom.owner"
	fields = append(fields, custom)
	for _, f := range fields {
		for _, op := range allOperators {
			supported := slices.Contains(f.Operators, op)
			t.Run(f.Key+"/"+op, func(t *testing.T) {
				_, err := Parse(json.RawMessage(cond(f.Key, op, sampleValue(f.Type, f.Key, op))), "conditions")
				if supported && err != nil {
					t.Fatalf("supported operator refused: %v %v", err, details(err))
				}
				if !supported {
					if err == nil {
						t.Fatal("unsupported operator accepted")
					}
					if _, ok := details(err)["conditions.0.operator"]; !ok {
						t.Fatalf("refusal does not name conditions.0.operator: %v", details(err))
					}
				}
			})
		}
	}
}

func TestCatalogueMatchesTheDocumentedTypes(t *testing.T) {
	want := map[string]Type{
		"hostname": TypeString, "network.macAddress": TypeString, "status": TypeEnum, "deviceRole": TypeEnum,
		"enrolledAt": TypeDatetime, "lastSeenAt": TypeDatetime, "daysSinceLastSeen": TypeNumber,
		"daysSinceEnrolled": TypeNumber, "metrics.diskPercent": TypeNumber, "isHeadless": TypeBoolean,
		"tags": TypeArray, "software.installed": TypeSoftware, "software.notInstalled": TypeSoftware,
		"orgId": TypeHierarchy, "groupId": TypeHierarchy,
	}
	got := map[string]FieldInfo{}
	for _, f := range Fields() {
		got[f.Key] = f
	}
	if len(got) != 36 {
		t.Errorf("catalogue has %d fields, want 36", len(got))
	}
	for k, typ := range want {
		if got[k].Type != typ {
			t.Errorf("%s: type %q, want %q", k, got[k].Type, typ)
		}
	}
	if ops := got["software.notInstalled"].Operators; !slices.Equal(ops, []string{"contains", "equals", "in", "hasAny"}) {
		t.Errorf("software.notInstalled operators %v", ops)
	}
}

func TestSemantics(t *testing.T) {
	cases := []struct {
		name      string
		field, op string
		value     any
		web, bare bool
	}{
		// strings
		{"equals exact", "hostname", "equals", "WEB-01.example.com", true, false},
		{"equals is case-sensitive", "hostname", "equals", "web-01.example.com", false, false},
		{"notEquals matches null", "hostname", "notEquals", "WEB-01.example.com", false, true},
		{"contains folds case", "hostname", "contains", "web-01", true, false},
		{"notContains matches null", "displayName", "notContains", "server", false, true},
		{"startsWith folds case", "displayName", "startsWith", "WEB", true, false},
		{"endsWith folds case", "hostname", "endsWith", ".EXAMPLE.COM", true, false},
		{"matches is RE2 and case-sensitive", "hostname", "matches", "^WEB-[0-9]+\\.", true, false},
		{"matches lower does not match upper", "hostname", "matches", "^web", false, false},
		{"in", "agentVersion", "in", []string{"2.4.0", "2.4.1"}, true, false},
		{"in empty matches nothing", "agentVersion", "in", []string{}, false, false},
		{"notIn empty matches everything", "agentVersion", "notIn", []string{}, true, true},
		{"notIn matches null", "agentVersion", "notIn", []string{"2.4.1"}, false, true},
		{"isNull", "lastUser", "isNull", nil, false, true},
		{"isNotNull", "lastUser", "isNotNull", nil, true, false},
		{"empty string is null", "hardware.gpuModel", "isNull", nil, true, true},
		{"hardware prefix", "hardware.manufacturer", "equals", "Dell", true, false},
		{"network prefix", "network.ipAddress", "startsWith", "10.", true, false},
		{"custom field", "custom.owner", "equals", "ops", true, false},
		{"custom field null", "custom.owner", "isNull", nil, false, true},
		{"custom field contains", "custom.rack", "contains", "r1", true, false},
		// enums
		{"enum equals", "status", "equals", "online", true, false},
		{"enum notEquals", "status", "notEquals", "online", false, true},
		{"enum in", "osType", "in", []string{"linux", "macos"}, false, true},
		{"enum notIn", "osType", "notIn", []string{"linux"}, true, false},
		{"deviceRole", "deviceRole", "equals", "server", true, false},
		// numbers
		{"greaterThan", "metrics.cpuPercent", "greaterThan", 90, true, false},
		{"greaterThanOrEquals edge", "hardware.cpuCores", "greaterThanOrEquals", 16, true, false},
		{"lessThan", "metrics.ramPercent", "lessThan", 40, false, false},
		{"lessThanOrEquals edge", "metrics.ramPercent", "lessThanOrEquals", 40, true, false},
		{"number equals", "hardware.ramTotalMb", "equals", 65536, true, false},
		{"number notEquals matches null", "hardware.ramTotalMb", "notEquals", 65536, false, true},
		{"between inclusive low", "metrics.diskPercent", "between", map[string]any{"from": 77, "to": 80}, true, false},
		{"between inclusive high", "metrics.diskPercent", "between", map[string]any{"from": 70, "to": 77}, true, false},
		{"number isNull", "uptimeSeconds", "isNull", nil, false, true},
		{"daysSinceLastSeen", "daysSinceLastSeen", "lessThan", 1, true, false},
		{"daysSinceEnrolled whole days", "daysSinceEnrolled", "equals", 70, true, false},
		{"daysSince null", "daysSinceLastSeen", "isNull", nil, false, true},
		// booleans
		{"boolean equals", "isHeadless", "equals", true, true, false},
		{"boolean notEquals matches null", "isHeadless", "notEquals", true, false, true},
		{"boolean isNotNull", "isHeadless", "isNotNull", nil, true, false},
		// datetimes
		{"withinLast minutes", "lastSeenAt", "withinLast", map[string]any{"amount": 5, "unit": "minutes"}, true, false},
		{"withinLast hours", "enrolledAt", "withinLast", map[string]any{"amount": 24, "unit": "hours"}, false, false},
		{"withinLast weeks", "enrolledAt", "withinLast", map[string]any{"amount": 11, "unit": "weeks"}, true, false},
		{"withinLast months calendar", "enrolledAt", "withinLast", map[string]any{"amount": 2, "unit": "months"}, false, false},
		{"withinLast 3 months", "enrolledAt", "withinLast", map[string]any{"amount": 3, "unit": "months"}, true, false},
		{"notWithinLast matches null", "lastSeenAt", "notWithinLast", map[string]any{"amount": 1, "unit": "days"}, false, true},
		{"before instant", "enrolledAt", "before", "2026-09-15T08:30:00.001Z", true, false},
		{"before is strict", "enrolledAt", "before", "2026-09-15T08:30:00Z", false, false},
		{"after whole day is after its end", "enrolledAt", "after", "2026-09-14", true, false},
		{"after same day is not", "enrolledAt", "after", "2026-09-15", false, false},
		{"equals whole day", "enrolledAt", "equals", "2026-09-15", true, false},
		{"equals instant to the millisecond", "enrolledAt", "equals", "2026-09-15T08:30:00.000Z", true, false},
		{"datetime notEquals matches null", "enrolledAt", "notEquals", "2026-09-15", false, true},
		{"between days inclusive", "enrolledAt", "between", map[string]any{"from": "2026-09-01", "to": "2026-09-15"}, true, false},
		{"between instants inclusive", "enrolledAt", "between", map[string]any{"from": "2026-09-15T08:30:00Z", "to": "2026-09-15T08:30:00Z"}, true, false},
		{"datetime isNull", "enrolledAt", "isNull", nil, false, true},
		// arrays
		{"tags hasAny folds case", "tags", "hasAny", []string{"production", "db"}, true, false},
		{"tags hasAll", "tags", "hasAll", []string{"production", "web"}, true, false},
		{"tags hasAll missing one", "tags", "hasAll", []string{"production", "db"}, false, false},
		{"tags contains is membership", "tags", "contains", "WEB", true, false},
		{"tags contains is not substring", "tags", "contains", "prod", false, false},
		{"tags isEmpty", "tags", "isEmpty", nil, false, true},
		{"tags isNotEmpty", "tags", "isNotEmpty", nil, true, false},
		// software
		{"installed contains", "software.installed", "contains", "chrome", true, false},
		{"installed notContains", "software.installed", "notContains", "firefox", true, true},
		{"installed equals", "software.installed", "equals", "7-zip", true, false},
		{"installed in", "software.installed", "in", []string{"Firefox", "7-Zip"}, true, false},
		{"installed hasAny", "software.installed", "hasAny", []string{"Firefox"}, false, false},
		{"installed hasAll", "software.installed", "hasAll", []string{"Google Chrome", "Microsoft Edge"}, true, false},
		{"notInstalled equals", "software.notInstalled", "equals", "Firefox", true, true},
		{"notInstalled equals installed", "software.notInstalled", "equals", "Google Chrome", false, true},
		{"notInstalled contains", "software.notInstalled", "contains", "edge", false, true},
		{"notInstalled in: one missing", "software.notInstalled", "in", []string{"Google Chrome", "Firefox"}, true, true},
		{"notInstalled hasAny: none missing", "software.notInstalled", "hasAny", []string{"Google Chrome", "7-Zip"}, false, true},
		// hierarchy
		{"orgId equals", "orgId", "equals", "org-a", true, false},
		{"siteId in", "siteId", "in", []string{"site-1", "site-9"}, true, false},
		{"groupId any group", "groupId", "equals", "grp-2", true, false},
		{"groupId in", "groupId", "in", []string{"grp-9"}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := compile(t, cond(c.field, c.op, c.value))
			if got := m(web); got != c.web {
				t.Errorf("web: got %v, want %v", got, c.web)
			}
			if got := m(bare); got != c.bare {
				t.Errorf("bare: got %v, want %v", got, c.bare)
			}
		})
	}
}

func TestGroupsNestAndCombine(t *testing.T) {
	body := `{"operator":"OR","conditions":[
		{"operator":"AND","conditions":[
			{"field":"osType","operator":"equals","value":"windows"},
			{"operator":"OR","conditions":[
				{"field":"metrics.cpuPercent","operator":"greaterThan","value":90},
				{"field":"tags","operator":"contains","value":"db"}]}]},
		{"field":"status","operator":"equals","value":"offline"}]}`
	m := compile(t, body)
	if !m(web) || !m(bare) {
		t.Fatalf("web %v bare %v, want both", m(web), m(bare))
	}
	lone := &Device{OSType: "windows", Status: "online", CPUPercent: ptr(10.0)}
	if m(lone) {
		t.Fatal("a windows device under 90% CPU without the db tag matched")
	}
}

func TestRefusalsNameEachPath(t *testing.T) {
	cases := []struct {
		name, body string
		paths      []string
	}{
		{"not an object", `[]`, []string{"conditions"}},
		{"empty group", `{"operator":"AND","conditions":[]}`, []string{"conditions.conditions"}},
		{"bad group operator", `{"operator":"XOR","conditions":[{"field":"hostname","operator":"isNull"}]}`, []string{"conditions.operator"}},
		{"lowercase group operator", `{"operator":"and","conditions":[{"field":"hostname","operator":"isNull"}]}`, []string{"conditions.operator"}},
		{"unknown group key", `{"operator":"AND","conditions":[{"field":"hostname","operator":"isNull"}],"x":1}`, []string{"conditions.x"}},
		{"unknown condition key", `{"operator":"AND","conditions":[{"field":"hostname","operator":"isNull","Value":1}]}`, []string{"conditions.0.Value"}},
		{"unknown field and bad operator together", `{"operator":"AND","conditions":[
			{"field":"nope","operator":"equals","value":"x"},
			{"field":"hostname","operator":"greaterThan","value":"x"},
			{"operator":"OR","conditions":[{"field":"tags","operator":"hasAny","value":"notalist"}]}]}`,
			[]string{"conditions.0.field", "conditions.1.operator", "conditions.2.conditions.0.value"}},
		{"field is case-sensitive", cond("HostName", "equals", "x"), []string{"conditions.0.field"}},
		{"prefix required", cond("cpuCores", "equals", 1), []string{"conditions.0.field"}},
		{"bad custom key", cond("custom.Owner", "equals", "x"), []string{"conditions.0.field"}},
		{"missing value", cond("hostname", "equals", nil), []string{"conditions.0.value"}},
		{"value on isNull", `{"operator":"AND","conditions":[{"field":"hostname","operator":"isNull","value":"x"}]}`, []string{"conditions.0.value"}},
		{"number as string", cond("hardware.cpuCores", "greaterThan", "4"), []string{"conditions.0.value"}},
		{"boolean as string", cond("isHeadless", "equals", "true"), []string{"conditions.0.value"}},
		{"bad date", cond("lastSeenAt", "before", "yesterday"), []string{"conditions.0.value"}},
		{"unknown enum value", cond("status", "equals", "up"), []string{"conditions.0.value"}},
		{"unknown enum in list", cond("osType", "in", []string{"windows", "dos"}), []string{"conditions.0.value"}},
		{"bad regexp", cond("hostname", "matches", "(["), []string{"conditions.0.value"}},
		{"long regexp", cond("hostname", "matches", strings.Repeat("a", 251)), []string{"conditions.0.value"}},
		{"between reversed", cond("metrics.cpuPercent", "between", map[string]any{"from": 9, "to": 1}), []string{"conditions.0.value"}},
		{"between missing to", cond("metrics.cpuPercent", "between", map[string]any{"from": 1}), []string{"conditions.0.value"}},
		{"withinLast bad unit", cond("lastSeenAt", "withinLast", map[string]any{"amount": 1, "unit": "years"}), []string{"conditions.0.value"}},
		{"withinLast fractional", cond("lastSeenAt", "withinLast", map[string]any{"amount": 1.5, "unit": "days"}), []string{"conditions.0.value"}},
		{"withinLast zero", cond("lastSeenAt", "withinLast", map[string]any{"amount": 0, "unit": "days"}), []string{"conditions.0.value"}},
		{"empty string value", cond("hostname", "contains", ""), []string{"conditions.0.value"}},
		{"element not an object", `{"operator":"AND","conditions":[1,{"field":"nope","operator":"isNull"}]}`, []string{"conditions.0", "conditions.1.field"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(json.RawMessage(c.body), "conditions")
			if err == nil {
				t.Fatal("accepted")
			}
			fe, _ := fault.As(err)
			if fe == nil || fe.Kind != fault.KindValidation || fe.Message != "Invalid filter" {
				t.Fatalf("error %v, want 400 Invalid filter", err)
			}
			got := details(err)
			for _, p := range c.paths {
				if _, ok := got[p]; !ok {
					t.Errorf("details %v do not name %s", got, p)
				}
			}
			if len(got) != len(c.paths) {
				t.Errorf("details name %d paths %v, want %v", len(got), got, c.paths)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	deep := `{"field":"hostname","operator":"isNull"}`
	for i := 0; i <= MaxDepth; i++ {
		deep = `{"operator":"AND","conditions":[` + deep + `]}`
	}
	if _, err := Parse(json.RawMessage(deep), "conditions"); err == nil {
		t.Fatalf("%d levels accepted", MaxDepth+1)
	}
	if _, err := Parse(json.RawMessage(deep[len(`{"operator":"AND","conditions":[`):len(deep)-2]), "conditions"); err != nil {
		t.Fatalf("%d levels refused: %v", MaxDepth, err)
	}
	var many []string
	for i := 0; i <= MaxConditions; i++ {
		many = append(many, `{"field":"hostname","operator":"isNull"}`)
	}
	if _, err := Parse(json.RawMessage(`{"operator":"OR","conditions":[`+strings.Join(many, ",")+`]}`), "conditions"); err == nil {
		t.Fatalf("%d conditions accepted", MaxConditions+1)
	}
	if _, err := Parse(json.RawMessage(`{"operator":"OR","conditions":[`+strings.Join(many[1:], ",")+`]}`), "conditions"); err != nil {
		t.Fatalf("%d conditions refused: %v", MaxConditions, err)
	}
}

// A parsed group survives the round trip through storage unchanged.
func TestStoredGroupRoundTrip(t *testing.T) {
	body := `{"operator":"AND","conditions":[{"field":"tags","operator":"hasAny","value":["a"]},{"operator":"OR","conditions":[{"field":"hostname","operator":"isNull"}]}]}`
	g, err := Parse(json.RawMessage(body), "conditions")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored) != body {
		t.Fatalf("stored %s, want %s", stored, body)
	}
	var back Group
	if err := json.Unmarshal(stored, &back); err != nil {
		t.Fatal(err)
	}
	if _, err := back.Compile(now); err != nil {
		t.Fatal(err)
	}
}

func ExampleParse() {
	g, err := Parse(json.RawMessage(`{"operator":"AND","conditions":[{"field":"osType","operator":"equals","value":"windows"}]}`), "conditions")
	if err != nil {
		panic(err)
	}
	m, _ := g.Compile(time.Now())
	fmt.Println(m(&Device{OSType: "windows"}), m(&Device{OSType: "linux"}))
	// Output: true false
}

// Issue 35: an unknown field, an unsupported operator and an enum value
// outside the set each name the valid choices in their message.
func TestRefusalsListTheChoices(t *testing.T) {
	cases := []struct {
		name, body, path string
		want             []string
	}{
		{"unknown field", cond("os", "equals", "x"), "conditions.0.field",
			[]string{`unknown field "os"; valid fields: `, "osType", "hostname", "custom.<key>"}},
		{"unsupported operator", cond("hostname", "eq", "x"), "conditions.0.operator",
			[]string{`operator "eq" is not supported by string field "hostname"; supported operators: `, "equals", "startsWith"}},
		{"enum value", cond("osType", "equals", "dos"), "conditions.0.value",
			[]string{"must be one of: windows, macos, linux"}},
		{"enum list value", cond("osType", "in", []string{"dos"}), "conditions.0.value",
			[]string{"values must be one of: windows, macos, linux"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(json.RawMessage(c.body), "conditions")
			if err == nil {
				t.Fatal("accepted")
			}
			msgs := details(err)[c.path]
			if len(msgs) != 1 {
				t.Fatalf("messages at %s: %v", c.path, details(err))
			}
			for _, w := range c.want {
				if !strings.Contains(msgs[0], w) {
					t.Errorf("message %q does not contain %q", msgs[0], w)
				}
			}
		})
	}
}
