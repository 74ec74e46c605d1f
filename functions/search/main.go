// Command search serves the search route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/searchgroup"
)

func main() { app.RunHTTP(searchgroup.Search) }
