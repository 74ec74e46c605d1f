// Command openapi writes the assembled OpenAPI document (what GET
// /api/v1/openapi.json serves) to standard output, for the linter and the
// client generator of make lint-openapi.
package main

import (
	"fmt"
	"os"

	"github.com/gale-rmm/gale/shared/api"
)

func main() {
	doc, err := api.Document()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(doc); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
