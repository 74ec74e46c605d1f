package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
)

// Bounds on one filter. They are far above what a person writes and bound the
// work one request can cause.
const (
	MaxDepth        = 16
	MaxConditions   = 200
	MaxListValues   = 500
	MaxValueLength  = 1000
	MaxPatternRunes = 250
	maxAmount       = 100000
)

// invalidMessage is the 400 of a filter that does not parse; its details name
// each bad path under "fieldErrors".
const invalidMessage = "Invalid filter"

// Group is a ConditionGroup: AND or OR over conditions and nested groups.
type Group struct {
	Operator   string `json:"operator"`
	Conditions []Node `json:"conditions"`
}

// Node is one element of a group: a nested group or a condition.
type Node struct {
	Group     *Group
	Condition *Condition
}

// Condition compares one field with a value.
type Condition struct {
	Field    string          `json:"field"`
	Operator string          `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// MarshalJSON writes the element as the group or condition it holds.
func (n Node) MarshalJSON() ([]byte, error) {
	if n.Group != nil {
		return json.Marshal(n.Group)
	}
	return json.Marshal(n.Condition)
}

// UnmarshalJSON reads a stored element back (stored filters were validated).
func (n *Node) UnmarshalJSON(b []byte) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return err
	}
	if _, ok := probe["conditions"]; ok {
		n.Group = &Group{}
		return json.Unmarshal(b, n.Group)
	}
	n.Condition = &Condition{}
	return json.Unmarshal(b, n.Condition)
}

// Parse reads and validates a ConditionGroup. Every problem is reported, each
// under its path below prefix (the body field holding the group, e.g.
// "conditions"), in one 400 `Invalid filter`.
func Parse(raw json.RawMessage, prefix string) (*Group, error) {
	p := parser{errs: fault.Fields{}}
	g := p.group(raw, prefix, 1)
	if g != nil {
		// Compiling checks every value, so value problems are reported beside
		// the structural ones.
		c := compiler{now: time.Unix(0, 0).UTC(), errs: p.errs}
		c.group(g, prefix, 1)
	}
	if len(p.errs) > 0 {
		return nil, invalid(p.errs)
	}
	return g, nil
}

func invalid(f fault.Fields) error {
	return &fault.Error{Kind: fault.KindValidation, Code: fault.CodeValidation, Message: invalidMessage,
		Details: map[string]any{"fieldErrors": map[string][]string(f)}}
}

type parser struct {
	errs  fault.Fields
	conds int
}

func (p *parser) group(raw json.RawMessage, path string, depth int) *Group {
	obj, ok := p.object(raw, path)
	if !ok {
		return nil
	}
	if depth > MaxDepth {
		p.errs.Addf(path, "groups nest at most %d levels", MaxDepth)
		return nil
	}
	g := &Group{}
	for k := range obj {
		if k != "operator" && k != "conditions" {
			p.errs.Add(join(path, k), "unknown field")
		}
	}
	if op, ok := p.stringField(obj, "operator", path); ok {
		if op != "AND" && op != "OR" {
			p.errs.Add(join(path, "operator"), "must be AND or OR")
		}
		g.Operator = op
	}
	rawList, present := obj["conditions"]
	var list []json.RawMessage
	switch {
	case !present:
		p.errs.Add(join(path, "conditions"), "is required")
		return g
	case json.Unmarshal(rawList, &list) != nil || isNull(rawList):
		p.errs.Add(join(path, "conditions"), "must be an array")
		return g
	case len(list) == 0:
		p.errs.Add(join(path, "conditions"), "must hold at least one condition")
		return g
	}
	for i, el := range list {
		// The root's elements sit directly under the body field ("conditions.0");
		// a nested group's under its own conditions ("conditions.0.conditions.1").
		elPath := join(join(path, "conditions"), strconv.Itoa(i))
		if depth == 1 {
			elPath = join(path, strconv.Itoa(i))
		}
		// A bad element keeps its place (an empty Node), so the paths that
		// compiling reports still match the body.
		var n Node
		if elObj, ok := p.object(el, elPath); ok {
			if _, isGroup := elObj["conditions"]; isGroup {
				n.Group = p.group(el, elPath, depth+1)
			} else {
				n.Condition = p.condition(elObj, elPath)
			}
		}
		g.Conditions = append(g.Conditions, n)
	}
	return g
}

func (p *parser) condition(obj map[string]json.RawMessage, path string) *Condition {
	p.conds++
	if p.conds == MaxConditions+1 {
		p.errs.Addf(path, "a filter holds at most %d conditions", MaxConditions)
	}
	if p.conds > MaxConditions {
		return nil
	}
	for k := range obj {
		if k != "field" && k != "operator" && k != "value" {
			p.errs.Add(join(path, k), "unknown field")
		}
	}
	c := &Condition{}
	key, keyOK := p.stringField(obj, "field", path)
	op, opOK := p.stringField(obj, "operator", path)
	c.Field, c.Operator = key, op
	if v, ok := obj["value"]; ok && !isNull(v) {
		c.Value = v
	}
	if !keyOK {
		return c
	}
	f, known := lookup(key)
	if !known {
		// Name the choices: the catalogue is documented, but the answer is
		// where a client looks first (issue 35).
		p.errs.Addf(join(path, "field"), "unknown field %q; valid fields: %s, custom.<key>", key, strings.Join(Keys(), ", "))
		return c
	}
	if opOK && !slices.Contains(f.ops, op) {
		p.errs.Addf(join(path, "operator"), "operator %q is not supported by %s field %q; supported operators: %s",
			op, f.typ, key, strings.Join(f.ops, ", "))
	}
	return c
}

func (p *parser) object(raw json.RawMessage, path string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) || json.Unmarshal(raw, &obj) != nil {
		p.errs.Add(nonEmpty(path), "must be an object")
		return nil, false
	}
	return obj, true
}

func (p *parser) stringField(obj map[string]json.RawMessage, key, path string) (string, bool) {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		p.errs.Add(join(path, key), "is required")
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		p.errs.Add(join(path, key), "must be a string")
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func nonEmpty(path string) string {
	if path == "" {
		return "conditions"
	}
	return path
}

// valueError is a problem with a condition's value.
type valueError struct{ msg string }

func (e valueError) Error() string { return e.msg }

func badValue(format string, args ...any) error { return valueError{fmt.Sprintf(format, args...)} }

// UsesSoftware reports whether any condition of g reads the software list, so
// callers load it only when a filter needs it.
func (g *Group) UsesSoftware() bool {
	for _, n := range g.Conditions {
		switch {
		case n.Group != nil && n.Group.UsesSoftware():
			return true
		case n.Condition != nil && strings.HasPrefix(n.Condition.Field, "software."):
			return true
		}
	}
	return false
}
