// Command scripts serves the scripts route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/scriptsgroup"
)

func main() { app.RunHTTP(scriptsgroup.Scripts) }
