// Command routeindex writes docs/route-tests.md, the index from each path of
// the OpenAPI document (shared/api) to the test functions whose body builds a
// request to it (`make route-tests`; TestRouteIndexIsCurrent fails when the
// committed index is stale).
//
// It reads the sources only (go/ast over every *_test.go file of the module;
// infra/cdk is its own module): string literals, "+" concatenations and
// fmt.Sprintf formats are evaluated, an operand or verb it cannot resolve to a
// string stands for a path parameter, and the result is matched against the
// path templates ({id} is one segment, a literal segment wins over a
// parameter). Identifiers resolve through package-level constants and
// variables (of the package or one it imports) and through locals assigned
// once. A method is the one the same call or composite literal names
// ("POST" or http.MethodPost). A test is credited with what its own body
// builds and what the helpers it calls build, when they are declared in the
// test files of its folder (one hop); tests/fixture's shared helpers (the
// world's setup) are not followed.
package main

import (
	"flag"
	"log"
	"os"
)

func main() {
	out := flag.String("out", "docs/route-tests.md", "the file to write")
	flag.Parse()
	idx, err := Build(".")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, []byte(idx.Markdown()), 0o644); err != nil {
		log.Fatal(err)
	}
}
