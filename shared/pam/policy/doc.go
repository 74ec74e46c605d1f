// Package policy is the PAM rule engine: the pure part of privileged
// elevation (spec 3, "PAM rule", "Signer group", "PAM config", rule
// validation 1-5, rule preview; docs/decisions.md#pam). It knows no HTTP, no
// store and no AWS: the pam services load rules, signer groups, software
// policies and the organization default verdict, and ask this package what
// they mean.
//
// It owns:
//
//   - the types of a rule (Rule, TimeWindow), a signer group (SignerGroup),
//     a software policy of the bridge (SoftwarePolicy), what an elevation
//     request carries (Observation) and the chain's answer (Decision);
//   - Validate (rules 1-5 of the spec and every bound, as field errors keyed
//     by JSON path, for 400 `Validation failed`), ValidateCriteria (a preview
//     draft), ValidatePolicy and NormalizeSigners;
//   - Match: one rule against one observation at an instant;
//   - Compile and Chain.Decide: the decision chain;
//   - Preview: one rule against a window of history;
//   - SubjectIsUser: who a request's subject is (the human self-approval
//     refusal and separation of duties both ask it).
//
// # Matching
//
// Every criterion a rule sets must match (AND); a rule that sets no
// criterion never matches, whatever its time window.
//
//   - matchPathGlob and matchParentImage are globs over the whole path: `\`
//     is read as `/` on both sides, case-insensitive, the whole string must
//     match; `*` matches within one segment (never `/`), `**` (two or more
//     stars) matches across segments, and `/**/` also matches a single `/`
//     (zero directories): `C:\Windows\**\cmd.exe` matches
//     `C:\Windows\cmd.exe`; `C:\Tools\**` matches everything below
//     `C:\Tools\`, not `C:\Tools` itself. `?`, `[` and every other character
//     are literal.
//   - matchSigner, matchHash, matchUser, matchAdGroup, matchToolName: whole
//     string, case-insensitive, both sides trimmed of surrounding spaces, no
//     domain normalisation. matchAdGroup matches when any of the subject's
//     groups is equal. matchSignerGroupId matches when the signer equals one
//     of the group's signers.
//   - matchCommandLine: case-insensitive substring of the command line, used
//     as given (not trimmed).
//   - matchRiskTier: equal tier.
//   - Case-insensitive means equal after folding: upper-, then lower-casing
//     (so the Kelvin sign matches k and the long s matches s).
//   - Negation (matchNegate names criteria): a negated criterion matches
//     when the observation has the value and the value does not match. An
//     observation that lacks the value (empty string, no tier, no groups)
//     never matches a criterion on it, negated or not (rule 4).
//   - timeWindow: the rule is active only inside it. HH:MM start and end,
//     both inclusive at minute granularity (17:00 includes 17:00:59); start
//     after end wraps midnight, and the listed days then name the day the
//     window opened (a Friday 22:00-06:00 window is active Saturday 02:00);
//     days 0-6 from Sunday, none listed means every day; timezone an IANA
//     name, UTC when empty (zone data is embedded, so Lambda needs none). A
//     malformed window (bad HH:MM, a day outside 0-6, an unknown zone) is
//     never active: the rule never matches.
//
// # The decision chain
//
// Chain.Decide runs, in order:
//
//  1. The software-policy bridge: enabled policies of the organization whose
//     executables match (an entry matches when every field it sets matches;
//     its strength is its strongest field, hash > signer > path glob). The
//     strongest match wins; at equal strength a blocklist beats an allowlist;
//     then the higher priority, the earlier createdAt, the smaller id name
//     the policy. A blocklist denies; an allowlist auto-approves for
//     DefaultApprovalMinutes.
//  2. Enabled rules of the organization (siteId null) and of the device's
//     site, by priority ascending, then createdAt, then id. The first that
//     matches decides with its verdict (ignore included).
//  3. The organization default verdict (require_approval when unset).
//
// Separation of duties covers everything an automatic approval rests on: an
// auto_approve rule never decides a request whose subject (SubjectIsUser)
// created or last edited the rule or the signer group it references
// (matchSignerGroupId, negated or not: whoever edits the group edits what
// the rule approves), and an allowlist policy never decides a request whose
// subject created or last edited the policy. The chain goes on to the next
// policy, rule or the default verdict, and Decision.Skipped records what was
// passed over. Only approvals are skipped: an auto_deny or ignore rule and a
// blocklist policy written by the subject still decide, since skipping them
// could only carry the request on towards an approval (a subject who denies
// themselves grants themselves nothing, and ignore records no request and
// approves nothing). Any evaluator error (a rule whose signer group is
// missing, an unknown verdict, a panic) stops the chain with
// require_approval and SourceError: the request is recorded pending.
//
// Compile does the per-rule work once (globs, folding, zones) and indexes the
// bridge's entries by hash and signer; Decide then folds the observation
// once and runs each rule's criteria cheapest first. BenchmarkDecide200Rules
// (200 rules and 300 policy entries, none deciding, so every rule runs)
// measured about 10 CPU-µs per request (goal 50 µs); BenchmarkCompile200Rules
// about 0.4 CPU-ms per compilation: a caller deciding often keeps the Chain.
//
// Globs run as a bit-parallel automaton after a literal prefix and suffix
// check: linear in the path and allocation-free; FuzzGlob holds them to an
// RE2 translation of the same semantics.
//
// # Preview
//
// Preview is a pure per-rule match over history (no priority shadowing, no
// bridge), each item judged at its requestedAt. It scans at most
// PreviewMaxScanned items (truncated when more were given) and returns at
// most PreviewMaxSamples samples, in history order.
package policy
