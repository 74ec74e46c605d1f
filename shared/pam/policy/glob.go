package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// glob is a compiled path glob (see the package doc for its semantics).
//
// A pattern is split into a literal prefix, a literal suffix and a middle
// that starts and ends with a wildcard. The prefix and suffix are compared
// first (most patterns fail there); the middle runs as a bit-parallel NFA
// (one bit per token, at most 63 tokens) in time linear in the path, without
// allocating. A longer middle falls back to an equivalent RE2 expression,
// also linear.
type glob struct {
	exact  bool   // no wildcard: the whole pattern is the literal prefix
	prefix string // folded
	suffix string // folded
	// NFA over the middle: bit 0 is the start, bit i+1 follows token i.
	n     int         // number of middle tokens
	class *[256]uint8 // byte -> index in masks (0: no literal token)
	masks []uint64    // bits of the literal tokens of each byte class
	star  uint64      // bits of `*` tokens (loop on any byte but '/')
	dstar uint64      // bits of `**` tokens (loop on any byte)
	eps1  uint64      // bits reachable from the previous bit without input (stars)
	eps2  uint64      // bits reachable from two bits back without input (`/**/`)
	re    *regexp.Regexp
}

type tokKind uint8

const (
	tokLit   tokKind = iota // one byte
	tokStar                 // *  : [^/]*
	tokDStar                // ** : .*
)

type token struct {
	kind  tokKind
	b     byte
	group bool // part of a `/**/` group: never part of the literal prefix or suffix
	skip2 bool // this '/' may be reached from two tokens back (the zero-directory `/**/`)
}

// maxNFATokens bounds the bit-parallel NFA (bit 0 is the start state).
const maxNFATokens = 63

// tokenize turns a normalised (folded, `/`-only) pattern into tokens.
func tokenize(p string) []token {
	toks := make([]token, 0, len(p))
	for i := 0; i < len(p); {
		if p[i] != '*' {
			toks = append(toks, token{kind: tokLit, b: p[i]})
			i++
			continue
		}
		j := i
		for j < len(p) && p[j] == '*' {
			j++
		}
		if j-i == 1 {
			toks = append(toks, token{kind: tokStar})
			i = j
			continue
		}
		// `**`: when it is a whole segment between two slashes, it may also
		// match zero directories (`/**/` matches `/`).
		if i > 0 && p[i-1] == '/' && j < len(p) && p[j] == '/' && len(toks) > 0 {
			toks[len(toks)-1].group = true
			toks = append(toks, token{kind: tokDStar, group: true},
				token{kind: tokLit, b: '/', group: true, skip2: true})
			i = j + 1
			continue
		}
		toks = append(toks, token{kind: tokDStar})
		i = j
	}
	return toks
}

// compileGlob compiles pattern (trimmed by the caller) for matching against
// normPath'd paths.
func compileGlob(pattern string) (*glob, error) {
	p := normPath(pattern)
	toks := tokenize(p)
	g := &glob{}
	lo := 0
	for lo < len(toks) && toks[lo].kind == tokLit && !toks[lo].group {
		lo++
	}
	if lo == len(toks) {
		g.exact, g.prefix = true, p
		return g, nil
	}
	hi := len(toks)
	for hi > lo && toks[hi-1].kind == tokLit && !toks[hi-1].group {
		hi--
	}
	g.prefix = litString(toks[:lo])
	g.suffix = litString(toks[hi:])
	mid := toks[lo:hi]
	g.n = len(mid)
	if g.n > maxNFATokens {
		re, err := regexp.Compile(globRegexp(p))
		if err != nil {
			return nil, fmt.Errorf("compile glob: %w", err)
		}
		g.re = re
		return g, nil
	}
	g.class, g.masks = new([256]uint8), []uint64{0}
	for i, t := range mid {
		bit := uint64(1) << (i + 1)
		switch t.kind {
		case tokLit:
			if g.class[t.b] == 0 {
				g.class[t.b] = uint8(len(g.masks))
				g.masks = append(g.masks, 0)
			}
			g.masks[g.class[t.b]] |= bit
			if t.skip2 {
				g.eps2 |= bit
			}
		case tokStar:
			g.star |= bit
			g.eps1 |= bit
		case tokDStar:
			g.dstar |= bit
			g.eps1 |= bit
		}
	}
	return g, nil
}

func litString(toks []token) string {
	b := make([]byte, len(toks))
	for i, t := range toks {
		b[i] = t.b
	}
	return string(b)
}

// match reports whether the normPath'd path s matches.
func (g *glob) match(s string) bool {
	if g.exact {
		return s == g.prefix
	}
	if len(s) < len(g.prefix)+len(g.suffix) || !strings.HasPrefix(s, g.prefix) || !strings.HasSuffix(s, g.suffix) {
		return false
	}
	if g.re != nil {
		return g.re.MatchString(s)
	}
	s = s[len(g.prefix) : len(s)-len(g.suffix)]
	d := g.closure(1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		loop := g.dstar
		if c != '/' {
			loop |= g.star
		}
		d = g.closure(((d << 1) & g.masks[g.class[c]]) | (d & loop))
		if d == 0 {
			return false
		}
	}
	return d&(uint64(1)<<g.n) != 0
}

// closure adds the states reachable without input.
func (g *glob) closure(d uint64) uint64 {
	for {
		n := d | ((d << 1) & g.eps1) | ((d << 2) & g.eps2)
		if n == d {
			return d
		}
		d = n
	}
}

// globRegexp is the RE2 expression equivalent to a normalised pattern: the
// long-pattern fallback, and the fuzz target's reference.
func globRegexp(p string) string {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	var lit []byte
	flush := func() {
		b.WriteString(regexp.QuoteMeta(string(lit)))
		lit = lit[:0]
	}
	toks := tokenize(p)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tokDStar && t.group:
			// `**` between slashes, with the '/' after it: zero or more
			// whole directories.
			flush()
			b.WriteString(`(?:.*/)?`)
			i++
		case t.kind == tokLit:
			lit = append(lit, t.b)
		case t.kind == tokStar:
			flush()
			b.WriteString(`[^/]*`)
		default:
			flush()
			b.WriteString(`.*`)
		}
	}
	flush()
	b.WriteString(`)$`)
	return b.String()
}
