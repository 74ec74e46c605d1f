package filter

import (
	"regexp"
	"sort"
	"strings"
	"time"
)

// Device is the engine's view of a device: the fields filters can read. The
// service fills it from the inventory record; empty strings and nil pointers are
// null.
type Device struct {
	ID       string
	OrgID    string
	SiteID   string
	GroupIDs []string

	Hostname     string
	DisplayName  string
	AgentVersion string
	LastUser     string
	OSVersion    string
	OSBuild      string

	Status       string
	OSType       string
	Architecture string
	DeviceRole   string

	IsHeadless    *bool
	UptimeSeconds *float64
	EnrolledAt    *time.Time
	LastSeenAt    *time.Time

	Tags         []string
	CustomFields map[string]string

	Manufacturer string
	Model        string
	SerialNumber string
	CPUModel     string
	GPUModel     string
	CPUCores     *float64
	RAMTotalMB   *float64
	DiskTotalGB  *float64

	IPAddress  string
	PublicIP   string
	MACAddress string

	CPUPercent  *float64
	RAMPercent  *float64
	DiskPercent *float64

	// Software holds installed package names.
	Software []string
}

// Type is a field's value type; it decides the operators the field takes.
type Type string

const (
	TypeString    Type = "string"
	TypeNumber    Type = "number"
	TypeBoolean   Type = "boolean"
	TypeDatetime  Type = "datetime"
	TypeArray     Type = "array"
	TypeEnum      Type = "enum"
	TypeSoftware  Type = "software"
	TypeHierarchy Type = "hierarchy"
)

// Operators by type. software.notInstalled narrows TypeSoftware (see field).
var operators = map[Type][]string{
	TypeString:    {"equals", "notEquals", "contains", "notContains", "startsWith", "endsWith", "matches", "in", "notIn", "isNull", "isNotNull"},
	TypeNumber:    {"equals", "notEquals", "greaterThan", "greaterThanOrEquals", "lessThan", "lessThanOrEquals", "between", "isNull", "isNotNull"},
	TypeBoolean:   {"equals", "notEquals", "isNull", "isNotNull"},
	TypeDatetime:  {"equals", "notEquals", "before", "after", "between", "withinLast", "notWithinLast", "isNull", "isNotNull"},
	TypeArray:     {"hasAny", "hasAll", "isEmpty", "isNotEmpty", "contains"},
	TypeEnum:      {"equals", "notEquals", "in", "notIn"},
	TypeSoftware:  {"contains", "notContains", "equals", "in", "hasAny", "hasAll"},
	TypeHierarchy: {"equals", "in"},
}

// notInstalledOps are the operators of software.notInstalled.
var notInstalledOps = []string{"contains", "equals", "in", "hasAny"}

// field is one catalogue entry; exactly one accessor is set, by type.
type field struct {
	typ   Type
	ops   []string
	enum  []string
	str   func(*Device) string
	num   func(*Device, time.Time) (float64, bool)
	tim   func(*Device) *time.Time
	boolv func(*Device) *bool
	arr   func(*Device) []string
	// negate marks software.notInstalled.
	negate bool
}

// Enum value sets.
var (
	Statuses      = []string{"online", "offline", "maintenance", "decommissioned", "quarantined", "updating", "pending"}
	OSTypes       = []string{"windows", "macos", "linux"}
	Architectures = []string{"x64", "x86", "arm64"}
	DeviceRoles   = []string{"workstation", "server", "printer", "router", "switch", "firewall", "access_point", "phone", "iot", "camera", "nas", "unknown"}
)

func num(p func(*Device) *float64) func(*Device, time.Time) (float64, bool) {
	return func(d *Device, _ time.Time) (float64, bool) {
		if v := p(d); v != nil {
			return *v, true
		}
		return 0, false
	}
}

func daysSince(p func(*Device) *time.Time) func(*Device, time.Time) (float64, bool) {
	return func(d *Device, now time.Time) (float64, bool) {
		t := p(d)
		if t == nil {
			return 0, false
		}
		return float64(int64(now.Sub(*t) / (24 * time.Hour))), true
	}
}

func str(t Type, get func(*Device) string) field { return field{typ: t, str: get} }

var catalogue = map[string]field{
	"hostname":              str(TypeString, func(d *Device) string { return d.Hostname }),
	"displayName":           str(TypeString, func(d *Device) string { return d.DisplayName }),
	"agentVersion":          str(TypeString, func(d *Device) string { return d.AgentVersion }),
	"lastUser":              str(TypeString, func(d *Device) string { return d.LastUser }),
	"osVersion":             str(TypeString, func(d *Device) string { return d.OSVersion }),
	"osBuild":               str(TypeString, func(d *Device) string { return d.OSBuild }),
	"hardware.manufacturer": str(TypeString, func(d *Device) string { return d.Manufacturer }),
	"hardware.model":        str(TypeString, func(d *Device) string { return d.Model }),
	"hardware.serialNumber": str(TypeString, func(d *Device) string { return d.SerialNumber }),
	"hardware.cpuModel":     str(TypeString, func(d *Device) string { return d.CPUModel }),
	"hardware.gpuModel":     str(TypeString, func(d *Device) string { return d.GPUModel }),
	"network.ipAddress":     str(TypeString, func(d *Device) string { return d.IPAddress }),
	"network.publicIp":      str(TypeString, func(d *Device) string { return d.PublicIP }),
	"network.macAddress":    str(TypeString, func(d *Device) string { return d.MACAddress }),

	"status":       {typ: TypeEnum, enum: Statuses, str: func(d *Device) string { return d.Status }},
	"osType":       {typ: TypeEnum, enum: OSTypes, str: func(d *Device) string { return d.OSType }},
	"architecture": {typ: TypeEnum, enum: Architectures, str: func(d *Device) string { return d.Architecture }},
	"deviceRole":   {typ: TypeEnum, enum: DeviceRoles, str: func(d *Device) string { return d.DeviceRole }},

	"enrolledAt": {typ: TypeDatetime, tim: func(d *Device) *time.Time { return d.EnrolledAt }},
	"lastSeenAt": {typ: TypeDatetime, tim: func(d *Device) *time.Time { return d.LastSeenAt }},

	"uptimeSeconds":        {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.UptimeSeconds })},
	"hardware.cpuCores":    {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.CPUCores })},
	"hardware.ramTotalMb":  {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.RAMTotalMB })},
	"hardware.diskTotalGb": {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.DiskTotalGB })},
	"metrics.cpuPercent":   {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.CPUPercent })},
	"metrics.ramPercent":   {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.RAMPercent })},
	"metrics.diskPercent":  {typ: TypeNumber, num: num(func(d *Device) *float64 { return d.DiskPercent })},
	"daysSinceLastSeen":    {typ: TypeNumber, num: daysSince(func(d *Device) *time.Time { return d.LastSeenAt })},
	"daysSinceEnrolled":    {typ: TypeNumber, num: daysSince(func(d *Device) *time.Time { return d.EnrolledAt })},

	"isHeadless": {typ: TypeBoolean, boolv: func(d *Device) *bool { return d.IsHeadless }},

	"tags": {typ: TypeArray, arr: func(d *Device) []string { return d.Tags }},

	"software.installed":    {typ: TypeSoftware, arr: func(d *Device) []string { return d.Software }},
	"software.notInstalled": {typ: TypeSoftware, ops: notInstalledOps, negate: true, arr: func(d *Device) []string { return d.Software }},

	"orgId":   {typ: TypeHierarchy, str: func(d *Device) string { return d.OrgID }},
	"siteId":  {typ: TypeHierarchy, str: func(d *Device) string { return d.SiteID }},
	"groupId": {typ: TypeHierarchy, arr: func(d *Device) []string { return d.GroupIDs }},
}

// customKey is the shape of a custom field's key.
var customKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// lookup resolves a field key, custom.<key> included.
func lookup(key string) (field, bool) {
	if f, ok := catalogue[key]; ok {
		if f.ops == nil {
			f.ops = operators[f.typ]
		}
		return f, true
	}
	if name, ok := strings.CutPrefix(key, "custom."); ok && len(name) <= 64 && customKey.MatchString(name) {
		return field{typ: TypeString, ops: operators[TypeString], str: func(d *Device) string { return d.CustomFields[name] }}, true
	}
	return field{}, false
}

// FieldInfo describes a catalogue entry for documentation and clients.
type FieldInfo struct {
	Key       string   `json:"key"`
	Type      Type     `json:"type"`
	Operators []string `json:"operators"`
	Values    []string `json:"values,omitempty"`
}

// CustomKey is how Custom names the custom fields: "custom." then a key of
// up to 64 characters, a lower-case letter then lower-case letters, digits and
// underscores (customKey).
const CustomKey = "custom.{key}"

// Custom describes the custom fields (custom.<key>): strings, whatever the key,
// so one entry stands for all of them.
func Custom() FieldInfo {
	return FieldInfo{Key: CustomKey, Type: TypeString, Operators: operators[TypeString]}
}

// Fields lists the catalogue, sorted by key (custom.<key> excluded: Custom).
func Fields() []FieldInfo {
	out := make([]FieldInfo, 0, len(catalogue))
	for k := range catalogue {
		f, _ := lookup(k)
		out = append(out, FieldInfo{Key: k, Type: f.typ, Operators: f.ops, Values: f.enum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Keys lists the catalogue's field keys, sorted (custom.<key> excluded), for
// the error that names the valid fields.
func Keys() []string {
	out := make([]string, 0, len(catalogue))
	for k := range catalogue {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
