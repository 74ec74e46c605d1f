package filter

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gale-rmm/gale/shared/fault"
)

// Matcher reports whether a device matches a compiled filter.
type Matcher func(*Device) bool

// Compile turns a parsed group into a Matcher that evaluates relative times
// (withinLast, daysSince*) at now.
func (g *Group) Compile(now time.Time) (Matcher, error) { return compileAt(g, "conditions", now) }

func compileAt(g *Group, prefix string, now time.Time) (Matcher, error) {
	c := compiler{now: now.UTC(), errs: fault.Fields{}}
	m := c.group(g, prefix, 1)
	if len(c.errs) > 0 {
		return nil, invalid(c.errs)
	}
	return m, nil
}

type compiler struct {
	now  time.Time
	errs fault.Fields
}

func (c *compiler) group(g *Group, path string, depth int) Matcher {
	preds := make([]Matcher, 0, len(g.Conditions))
	for i, n := range g.Conditions {
		p := join(join(path, "conditions"), strconv.Itoa(i))
		if depth == 1 {
			p = join(path, strconv.Itoa(i))
		}
		var m Matcher
		if n.Group != nil {
			m = c.group(n.Group, p, depth+1)
		} else if n.Condition != nil {
			m = c.condition(n.Condition, p)
		}
		if m != nil {
			preds = append(preds, m)
		}
	}
	if len(preds) == 1 {
		return preds[0]
	}
	if g.Operator == "OR" {
		return func(d *Device) bool {
			for _, p := range preds {
				if p(d) {
					return true
				}
			}
			return false
		}
	}
	return func(d *Device) bool {
		for _, p := range preds {
			if !p(d) {
				return false
			}
		}
		return true
	}
}

func (c *compiler) condition(cond *Condition, path string) Matcher {
	f, ok := lookup(cond.Field)
	if !ok || !slices.Contains(f.ops, cond.Operator) {
		return nil // parsing reported it
	}
	m, err := build(f, cond.Operator, cond.Value, c.now)
	if err != nil {
		c.errs.Add(join(path, "value"), err.Error())
		return nil
	}
	return m
}

// build compiles one condition; op is supported by f.
func build(f field, op string, raw json.RawMessage, now time.Time) (Matcher, error) {
	switch op {
	case "isNull", "isNotNull", "isEmpty", "isNotEmpty":
		if len(raw) > 0 {
			return nil, badValue("must be absent for %s", op)
		}
		return nullCheck(f, op), nil
	}
	if len(raw) == 0 {
		return nil, badValue("is required for %s", op)
	}
	switch f.typ {
	case TypeString, TypeEnum:
		return stringOp(f, op, raw)
	case TypeHierarchy:
		return hierarchyOp(f, op, raw)
	case TypeNumber:
		return numberOp(f, op, raw, now)
	case TypeBoolean:
		return boolOp(f, op, raw)
	case TypeDatetime:
		return timeOp(f, op, raw, now)
	case TypeArray:
		return arrayOp(f, op, raw)
	case TypeSoftware:
		return softwareOp(f, op, raw)
	}
	return nil, badValue("unsupported field type")
}

func not(m Matcher) Matcher { return func(d *Device) bool { return !m(d) } }

func nullCheck(f field, op string) Matcher {
	var isNull Matcher
	switch {
	case f.str != nil:
		isNull = func(d *Device) bool { return f.str(d) == "" }
	case f.num != nil:
		isNull = func(d *Device) bool { _, ok := f.num(d, time.Time{}); return !ok }
	case f.tim != nil:
		isNull = func(d *Device) bool { return f.tim(d) == nil }
	case f.boolv != nil:
		isNull = func(d *Device) bool { return f.boolv(d) == nil }
	case f.arr != nil:
		isNull = func(d *Device) bool { return len(f.arr(d)) == 0 }
	}
	if op == "isNotNull" || op == "isNotEmpty" {
		return not(isNull)
	}
	return isNull
}

func stringOp(f field, op string, raw json.RawMessage) (Matcher, error) {
	get := f.str
	switch op {
	case "in", "notIn":
		vals, err := stringList(raw, f.enum)
		if err != nil {
			return nil, err
		}
		in := func(d *Device) bool { s := get(d); return s != "" && slices.Contains(vals, s) }
		if op == "notIn" {
			return not(in), nil
		}
		return in, nil
	}
	v, err := scalarString(raw)
	if err != nil {
		return nil, err
	}
	if f.enum != nil && !slices.Contains(f.enum, v) {
		return nil, badValue("must be one of: %s", strings.Join(f.enum, ", "))
	}
	lower := strings.ToLower(v)
	switch op {
	case "equals":
		return func(d *Device) bool { return get(d) == v }, nil
	case "notEquals":
		return func(d *Device) bool { return get(d) != v }, nil
	case "contains":
		return func(d *Device) bool { return containsFold(get(d), lower) }, nil
	case "notContains":
		return func(d *Device) bool { return !containsFold(get(d), lower) }, nil
	case "startsWith":
		return func(d *Device) bool { return hasPrefixFold(get(d), lower) }, nil
	case "endsWith":
		return func(d *Device) bool { return hasSuffixFold(get(d), lower) }, nil
	case "matches":
		if utf8.RuneCountInString(v) > MaxPatternRunes {
			return nil, badValue("pattern is longer than %d characters", MaxPatternRunes)
		}
		re, err := regexp.Compile(v)
		if err != nil {
			return nil, badValue("is not a valid regular expression")
		}
		return func(d *Device) bool { s := get(d); return s != "" && re.MatchString(s) }, nil
	}
	return nil, badValue("unsupported operator")
}

func hierarchyOp(f field, op string, raw json.RawMessage) (Matcher, error) {
	var vals []string
	if op == "in" {
		var err error
		if vals, err = stringList(raw, nil); err != nil {
			return nil, err
		}
	} else {
		v, err := scalarString(raw)
		if err != nil {
			return nil, err
		}
		vals = []string{v}
	}
	if f.arr != nil {
		return func(d *Device) bool {
			for _, g := range f.arr(d) {
				if slices.Contains(vals, g) {
					return true
				}
			}
			return false
		}, nil
	}
	return func(d *Device) bool { s := f.str(d); return s != "" && slices.Contains(vals, s) }, nil
}

func numberOp(f field, op string, raw json.RawMessage, now time.Time) (Matcher, error) {
	get := func(d *Device) (float64, bool) { return f.num(d, now) }
	if op == "between" {
		var r struct{ From, To json.RawMessage }
		if err := rangeObject(raw, &r.From, &r.To); err != nil {
			return nil, err
		}
		lo, err := number(r.From)
		if err != nil {
			return nil, badValue("from %s", err)
		}
		hi, err := number(r.To)
		if err != nil {
			return nil, badValue("to %s", err)
		}
		if lo > hi {
			return nil, badValue("from must not be greater than to")
		}
		return func(d *Device) bool { v, ok := get(d); return ok && v >= lo && v <= hi }, nil
	}
	x, err := number(raw)
	if err != nil {
		return nil, err
	}
	var cmp func(v float64) bool
	switch op {
	case "equals":
		cmp = func(v float64) bool { return v == x }
	case "notEquals":
		return func(d *Device) bool { v, ok := get(d); return !ok || v != x }, nil
	case "greaterThan":
		cmp = func(v float64) bool { return v > x }
	case "greaterThanOrEquals":
		cmp = func(v float64) bool { return v >= x }
	case "lessThan":
		cmp = func(v float64) bool { return v < x }
	case "lessThanOrEquals":
		cmp = func(v float64) bool { return v <= x }
	default:
		return nil, badValue("unsupported operator")
	}
	return func(d *Device) bool { v, ok := get(d); return ok && cmp(v) }, nil
}

func boolOp(f field, op string, raw json.RawMessage) (Matcher, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, badValue("must be a boolean")
	}
	eq := func(d *Device) bool { p := f.boolv(d); return p != nil && *p == b }
	if op == "notEquals" {
		return not(eq), nil
	}
	return eq, nil
}

// span is a datetime value: an instant (lo == hi) or a whole day [lo, hi).
type span struct{ lo, hi time.Time }

func (s span) instant() bool { return s.lo.Equal(s.hi) }

func timeOp(f field, op string, raw json.RawMessage, now time.Time) (Matcher, error) {
	get := f.tim
	switch op {
	case "withinLast", "notWithinLast":
		cutoff, err := within(raw, now)
		if err != nil {
			return nil, err
		}
		in := func(d *Device) bool { t := get(d); return t != nil && !t.Before(cutoff) }
		if op == "notWithinLast" {
			return not(in), nil
		}
		return in, nil
	case "between":
		var from, to json.RawMessage
		if err := rangeObject(raw, &from, &to); err != nil {
			return nil, err
		}
		a, err := datetime(from)
		if err != nil {
			return nil, badValue("from %s", err)
		}
		b, err := datetime(to)
		if err != nil {
			return nil, badValue("to %s", err)
		}
		end, inclusive := b.hi, b.instant()
		if a.lo.After(end) {
			return nil, badValue("from must not be later than to")
		}
		return func(d *Device) bool {
			t := get(d)
			if t == nil || t.Before(a.lo) {
				return false
			}
			if inclusive {
				return !t.After(end)
			}
			return t.Before(end)
		}, nil
	}
	s, err := datetime(raw)
	if err != nil {
		return nil, err
	}
	inSpan := func(t time.Time) bool {
		if s.instant() {
			return t.UnixMilli() == s.lo.UnixMilli()
		}
		return !t.Before(s.lo) && t.Before(s.hi)
	}
	switch op {
	case "equals":
		return func(d *Device) bool { t := get(d); return t != nil && inSpan(*t) }, nil
	case "notEquals":
		return func(d *Device) bool { t := get(d); return t == nil || !inSpan(*t) }, nil
	case "before":
		return func(d *Device) bool { t := get(d); return t != nil && t.Before(s.lo) }, nil
	case "after":
		if s.instant() {
			return func(d *Device) bool { t := get(d); return t != nil && t.After(s.lo) }, nil
		}
		return func(d *Device) bool { t := get(d); return t != nil && !t.Before(s.hi) }, nil
	}
	return nil, badValue("unsupported operator")
}

func arrayOp(f field, op string, raw json.RawMessage) (Matcher, error) {
	get := f.arr
	if op == "contains" {
		v, err := scalarString(raw)
		if err != nil {
			return nil, err
		}
		return func(d *Device) bool { return hasFold(get(d), v) }, nil
	}
	vals, err := stringList(raw, nil)
	if err != nil {
		return nil, err
	}
	if op == "hasAll" {
		return func(d *Device) bool {
			for _, v := range vals {
				if !hasFold(get(d), v) {
					return false
				}
			}
			return true
		}, nil
	}
	return func(d *Device) bool { return hasAnyFold(get(d), vals) }, nil
}

func softwareOp(f field, op string, raw json.RawMessage) (Matcher, error) {
	get := f.arr
	var m Matcher
	switch op {
	case "contains", "notContains", "equals":
		v, err := scalarString(raw)
		if err != nil {
			return nil, err
		}
		lower := strings.ToLower(v)
		switch op {
		case "equals":
			m = func(d *Device) bool { return hasFold(get(d), v) }
		case "contains":
			m = func(d *Device) bool { return anyContainsFold(get(d), lower) }
		case "notContains":
			m = func(d *Device) bool { return !anyContainsFold(get(d), lower) }
		}
	case "in", "hasAny", "hasAll":
		vals, err := stringList(raw, nil)
		if err != nil {
			return nil, err
		}
		switch {
		case f.negate: // at least one listed name is not installed
			m = func(d *Device) bool {
				for _, v := range vals {
					if !hasFold(get(d), v) {
						return true
					}
				}
				return false
			}
			return m, nil
		case op == "hasAll":
			m = func(d *Device) bool {
				for _, v := range vals {
					if !hasFold(get(d), v) {
						return false
					}
				}
				return true
			}
		default:
			m = func(d *Device) bool { return hasAnyFold(get(d), vals) }
		}
	default:
		return nil, badValue("unsupported operator")
	}
	if f.negate {
		return not(m), nil
	}
	return m, nil
}

// Values.

func scalarString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", badValue("must be a string")
	}
	if s == "" {
		return "", badValue("must not be empty (use isNull or isEmpty)")
	}
	if len(s) > MaxValueLength {
		return "", badValue("must be at most %d characters", MaxValueLength)
	}
	return s, nil
}

func stringList(raw json.RawMessage, enum []string) ([]string, error) {
	var vals []string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		if err := json.Unmarshal(raw, &vals); err != nil {
			return nil, badValue("must be an array of strings")
		}
	} else {
		return nil, badValue("must be an array of strings")
	}
	if len(vals) > MaxListValues {
		return nil, badValue("must hold at most %d values", MaxListValues)
	}
	for _, v := range vals {
		if len(v) > MaxValueLength {
			return nil, badValue("values must be at most %d characters", MaxValueLength)
		}
		if enum != nil && !slices.Contains(enum, v) {
			return nil, badValue("values must be one of: %s", strings.Join(enum, ", "))
		}
	}
	return vals, nil
}

func number(raw json.RawMessage) (float64, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] == '"' {
		return 0, badValue("must be a number")
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err != nil {
		return 0, badValue("must be a number")
	}
	x, err := n.Float64()
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, badValue("must be a finite number")
	}
	return x, nil
}

func datetime(raw json.RawMessage) (span, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return span{}, badValue("must be an RFC 3339 time or a date (YYYY-MM-DD)")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		t = t.UTC()
		return span{lo: t, hi: t}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return span{lo: t, hi: t.AddDate(0, 0, 1)}, nil
	}
	return span{}, badValue("must be an RFC 3339 time or a date (YYYY-MM-DD)")
}

// rangeObject reads {from, to}, both required, nothing else.
func rangeObject(raw json.RawMessage, from, to *json.RawMessage) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return badValue("must be an object {from, to}")
	}
	for k := range obj {
		if k != "from" && k != "to" {
			return badValue("unknown field %q (want from, to)", k)
		}
	}
	var ok1, ok2 bool
	*from, ok1 = obj["from"]
	*to, ok2 = obj["to"]
	if !ok1 || !ok2 {
		return badValue("must have both from and to")
	}
	return nil
}

// within reads {amount, unit} and answers the cutoff instant before now.
func within(raw json.RawMessage, now time.Time) (time.Time, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return time.Time{}, badValue("must be an object {amount, unit}")
	}
	for k := range obj {
		if k != "amount" && k != "unit" {
			return time.Time{}, badValue("unknown field %q (want amount, unit)", k)
		}
	}
	amount, err := number(obj["amount"])
	if err != nil || amount != math.Trunc(amount) || amount < 1 || amount > maxAmount {
		return time.Time{}, badValue("amount must be a whole number from 1 to %d", maxAmount)
	}
	var unit string
	_ = json.Unmarshal(obj["unit"], &unit)
	n := int(amount)
	switch unit {
	case "minutes":
		return now.Add(-time.Duration(n) * time.Minute), nil
	case "hours":
		return now.Add(-time.Duration(n) * time.Hour), nil
	case "days":
		return now.AddDate(0, 0, -n), nil
	case "weeks":
		return now.AddDate(0, 0, -7*n), nil
	case "months":
		return now.AddDate(0, -n, 0), nil
	}
	return time.Time{}, badValue("unit must be minutes, hours, days, weeks or months")
}

// Case folding without allocation on the common ASCII path.

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

// containsFold reports whether s contains lower (already lower-cased), ignoring case.
func containsFold(s, lower string) bool {
	if s == "" {
		return false
	}
	if !isASCII(s) || !isASCII(lower) {
		return strings.Contains(strings.ToLower(s), lower)
	}
	n := len(lower)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && lowerASCII(s[i+j]) == lower[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, lower string) bool {
	if s == "" {
		return false
	}
	if isASCII(s) && isASCII(lower) {
		return len(s) >= len(lower) && strings.EqualFold(s[:len(lower)], lower)
	}
	return strings.HasPrefix(strings.ToLower(s), lower)
}

func hasSuffixFold(s, lower string) bool {
	if s == "" {
		return false
	}
	if isASCII(s) && isASCII(lower) {
		return len(s) >= len(lower) && strings.EqualFold(s[len(s)-len(lower):], lower)
	}
	return strings.HasSuffix(strings.ToLower(s), lower)
}

func hasFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func hasAnyFold(list, vals []string) bool {
	for _, v := range vals {
		if hasFold(list, v) {
			return true
		}
	}
	return false
}

func anyContainsFold(list []string, lower string) bool {
	for _, x := range list {
		if containsFold(x, lower) {
			return true
		}
	}
	return false
}
