// Command organizations serves the organizations route group as a Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app"

func main() { app.RunHTTP(app.Organizations) }
