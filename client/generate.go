package client

// The generated half (client.gen.go) comes from the assembled document, what
// GET /api/v1/openapi.json serves (shared/api.Document), by oapi-codegen at a
// pinned version; TestGeneratedClientIsCurrent fails when it is stale.
//go:generate sh -c "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; go run ../shared/api/cmd/openapi > $d/openapi.json; go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml -o client.gen.go $d/openapi.json"
