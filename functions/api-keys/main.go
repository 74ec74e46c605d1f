// Command api-keys serves the api-keys route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/apikeysgroup"
)

func main() { app.RunHTTP(apikeysgroup.APIKeys) }
