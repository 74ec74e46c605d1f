// Command filters serves the filters route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/filtersgroup"
)

func main() { app.RunHTTP(filtersgroup.Filters) }
