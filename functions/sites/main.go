// Command sites serves the sites route group as a Lambda function.
package main

import (
	// Lambda's provided.al2023 image has no zoneinfo; site timezones are validated
	// with time.LoadLocation, so the database is embedded here (about 450 KB).
	_ "time/tzdata"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/sitesgroup"
)

func main() { app.RunHTTP(sitesgroup.Sites) }
