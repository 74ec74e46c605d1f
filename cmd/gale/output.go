package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// show prints v as indented JSON under --json, else the table (a header and
// rows; tab-aligned).
func (a *app) show(v any, header []string, rows [][]string) error {
	if a.json {
		enc := json.NewEncoder(a.io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	w := tabwriter.NewWriter(a.io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return w.Flush()
}

// Cells of a table: an absent value is "-".
func str(p *string) string {
	if p == nil || *p == "" {
		return "-"
	}
	return *p
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func num(p *int) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func uuidStr(p *openapi_types.UUID) string {
	if p == nil {
		return "-"
	}
	return p.String()
}
