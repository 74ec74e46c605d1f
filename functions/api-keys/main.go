// Command api-keys serves the api-keys route group as a Lambda function.
package main

import "github.com/gale-rmm/gale/shared/app"

func main() { app.RunHTTP(app.NotBuilt("api-keys")) }
