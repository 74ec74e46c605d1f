// Package filter is the device filter engine: it parses a ConditionGroup (the body
// of a saved filter or a preview), validates every condition against the field
// catalogue, and compiles it into a Matcher that evaluates devices in memory. It
// does no I/O; the saved-filter service loads devices and feeds them through.
//
// # Shape
//
// A group is {"operator": "AND"|"OR", "conditions": [...]} with at least one
// element; an element with a "conditions" key is a group, any other a condition
// {"field", "operator", "value"?}. Groups nest up to MaxDepth levels and a filter
// holds at most MaxConditions conditions (both far above what a person writes;
// they bound the work a request can cause). Unknown keys, unknown fields,
// operators the field's type does not support and malformed values are all
// reported together, each under its path ("conditions.0.conditions.2.operator"),
// as one 400 `Invalid filter`.
//
// # Semantics
//
//   - equals, notEquals, in, notIn compare strings exactly (case-sensitive), as the
//     operator table says "exact match"; contains, notContains, startsWith and
//     endsWith fold case. matches is Go RE2 syntax, case-sensitive, pattern at most
//     250 characters, compiled once at parse time (a bad pattern is refused).
//   - A negated operator is the exact complement of its positive form, so
//     notEquals, notContains, notIn and notWithinLast match devices where the field
//     is null ("every device whose displayName is not X" includes those without one).
//     Comparisons (greaterThan, before, between, ...) never match null.
//   - An empty string is null for string fields: agents report "" for what they
//     do not know.
//   - in with an empty list matches nothing; notIn with an empty list matches all.
//   - Datetime values are RFC 3339 instants or whole days (YYYY-MM-DD, UTC). A whole
//     day d means the interval [d, d+1 day): equals matches inside it, before
//     matches earlier than its start, after later than its end, and between
//     {from, to} runs from the start of from to the end of to. Both ends of every
//     between are inclusive.
//   - withinLast {amount, unit} matches t >= now - amount units (unit minutes, hours,
//     days, weeks or months; months are calendar months); now is fixed when the
//     filter is compiled, so one preview evaluates every device at one instant.
//   - daysSinceLastSeen and daysSinceEnrolled are whole days elapsed (floor) at now;
//     null when the timestamp is.
//   - Array operators on tags and software names fold case: tags and package names
//     are labels people type. contains on tags is element membership.
//   - software.installed: contains (some installed name contains the text),
//     notContains (none does), equals (some name is the value), in / hasAny (some
//     listed name is installed), hasAll (every listed name is). software.notInstalled
//     is the complement for a single name: contains (no installed name contains the
//     text), equals (the name is not installed), in / hasAny (at least one listed
//     name is not installed).
//   - Hierarchy fields orgId, siteId and groupId take equals and in; groupId matches
//     when any of the device's groups does.
//   - custom.<key>: key is lowercase, starts with a letter, then letters, digits or
//     underscores; values are compared as strings with the string operators.
//   - Enum values are checked against their sets (status, osType, architecture,
//     deviceRole), so a typo is a 400 rather than an empty preview.
package filter
